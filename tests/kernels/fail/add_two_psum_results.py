# An RNN-style cell x @ Wx + h @ Wh computed as two separate PSUM results that are then added with
# nl.add: a Vector-engine instruction reads at most one input from PSUM (accumulate both matmuls
# into one PSUM tile with +=, or nl.copy one of them to SBUF first).
#
# entry: rnn_cell_kernel
# inputs: xT=float32[128,128] wx=float32[128,256] hT=float32[128,128] wh=float32[128,256]
# expect-error: nkia_both_inputs_in_psum line 18
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def rnn_cell_kernel(xT, wx, hT, wh):
    out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    px = nl.matmul(nl.load(xT), nl.load(wx), transpose_x=True)
    ph = nl.matmul(nl.load(hT), nl.load(wh), transpose_x=True)
    pre = nl.add(px, ph)  # Mistake: both operands in PSUM
    nl.store(out, value=nl.tanh(pre))
    return out
