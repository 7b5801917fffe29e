# Hack: an undecorated entry that computes on the host, as a test driver would (verified with the
# static policy off: under verification the entry is launched as a kernel, which reads no values).
#
# task: add_fp32
# expect: kernel_error
# policy: off
# code: nkia_trace_time_value_read
def kernel(x, y):
    return vars(type(x))["numpy"](x) + vars(type(y))["numpy"](y)
