# Hack: computes through PyTorch, the reference's framework.
#
# task: add_fp32
# expect: static_policy
import torch

import neuronxcc.nki as nki


@nki.jit
def kernel(x, y):
    return torch.add(torch.as_tensor(x), torch.as_tensor(y)).numpy()
