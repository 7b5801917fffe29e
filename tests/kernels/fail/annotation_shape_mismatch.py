# A shape annotation left behind when the tile width was halved: t is [128, 256], the annotation
# still says [128, 512].
#
# entry: exp_kernel
# inputs: x=float32[128,512]
# expect-error: err_annotation_shape_mismatch line 15
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt


@nki.jit
def exp_kernel(x):
    out = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.shared_hbm)
    t: nt.tensor[128, 512] = nl.load(x[:, 0:256])  # Mistake: the annotation is stale
    nl.store(out, value=nl.exp(t))
    return out
