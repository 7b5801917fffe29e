"""nki-library's `test.utils.unit_test_framework`, as nki-agent's numeric run of its tests needs it
(numerics.py --repo library; written over the upstream module in the scratch folder).

`UnitTestFramework(kernel_entry, torch_ref, kernel_input_generator, output_tensor_descriptor)`
`.run_test(test_config, compiler_args, rtol, atol, ...)` does what the upstream framework's
documentation says: the reference takes the kernel's parameters, the generated inputs go to both
(keys ending `.must_alias_input` name the parameter before the suffix), the descriptor names and
types the outputs, and the test manager runs the kernel and compares within (rtol, atol).

The sandbox has no PyTorch, so `torch_ref_wrapper(ref)` does not call `ref`: called with the
reference's inputs it records the call (DeferredReference) and returns a DeferredOutputs, which the
test manager hands, with the kernel's outputs, to nkilib_reference.py outside the sandbox; that
calls `ref` on the same inputs with PyTorch, converting as the upstream wrapper documents (NumPy
arrays to tensors, bfloat16 and float8 as float32, uint32 as int32, float16 computed in float32;
results back to NumPy, rounded back to the inputs' low-precision type with
`preserve_lower_precision`).
"""
import copy
import inspect
from test.utils.common_dataclasses import KernelArgs, LazyGoldenGenerator, ValidationArgs
from test.utils.coverage_parametrized_tests import assert_negative_test_case

ALIAS_SUFFIX = ".must_alias_input"


class DeferredOutputs(dict):
    """What a wrapped torch reference returns in the sandbox: the recorded call (`.call`), and no values."""

    def __init__(self, call):
        super().__init__()
        self.call = call


class DeferredReference:
    """`torch_ref_wrapper(ref)` in the sandbox: a callable with `ref`'s signature that records its
    calls instead of running them (the arguments copied, so that a kernel writing its inputs in
    place does not change what the reference sees)."""

    def __init__(self, func, preserve_lower_precision=False):
        self.func = func
        self.preserve_lower_precision = preserve_lower_precision
        self.__wrapped__ = func
        self.__name__ = getattr(func, "__name__", "torch_ref")
        self.__qualname__ = getattr(func, "__qualname__", self.__name__)
        self.__module__ = getattr(func, "__module__", None)

    def __call__(self, **kwargs):
        return DeferredOutputs({
            "module": self.func.__module__,
            "qualname": self.func.__qualname__,
            "preserve_lower_precision": self.preserve_lower_precision,
            "kwargs": {k: copy.deepcopy(v) for k, v in kwargs.items()},
        })


def torch_ref_wrapper(torch_ref_func, preserve_lower_precision=False):
    return DeferredReference(torch_ref_func, preserve_lower_precision)


def _parameters(func):
    return inspect.signature(func).parameters


def validate_torch_ref_signature(kernel_entry, torch_ref):
    kernel, ref = set(_parameters(kernel_entry)), set(_parameters(torch_ref))
    if kernel != ref:
        raise ValueError(f"Torch ref signature mismatch with kernel: missing in torch_ref {sorted(kernel - ref)}, "
                         f"extra in torch_ref {sorted(ref - kernel)}")


def _base(key):
    return key[: -len(ALIAS_SUFFIX)] if key.endswith(ALIAS_SUFFIX) else key


class UnitTestFramework:
    def __init__(self, test_manager, kernel_entry, torch_ref, kernel_input_generator, output_tensor_descriptor,
                 check_unused_params=False, collector=None):
        validate_torch_ref_signature(kernel_entry, torch_ref)
        self.test_manager = test_manager
        self.kernel_entry = kernel_entry
        self.torch_ref = torch_ref
        self.kernel_input_generator = kernel_input_generator
        self.output_tensor_descriptor = output_tensor_descriptor

    def run_test(self, test_config, compiler_args, rtol=1e-05, atol=1e-08, is_negative_test=False,
                 inference_args=None, custom_validation_args=None, metadata=None):
        with assert_negative_test_case(is_negative_test):
            kernel_input = self.kernel_input_generator(test_config)
            params = _parameters(self.kernel_entry)
            extra = [k for k in kernel_input if _base(k) not in params]
            if extra:
                raise ValueError(f"kernel_input has keys {extra} that match no parameter of the kernel "
                                 f"({sorted(params)})")
            missing = [n for n, p in params.items() if p.default is inspect.Parameter.empty
                       and n not in kernel_input and n + ALIAS_SUFFIX not in kernel_input]
            if missing:
                raise ValueError(f"kernel_input lacks the required parameters {missing}")
            ref_params = _parameters(self.torch_ref)
            ref_input = {_base(k): v for k, v in kernel_input.items() if _base(k) in ref_params}
            outputs = self.output_tensor_descriptor(kernel_input)
            golden = LazyGoldenGenerator(lazy_golden_generator=lambda: self.torch_ref(**ref_input),
                                         output_ndarray=outputs)
            validation = custom_validation_args or ValidationArgs(golden_output=golden, relative_accuracy=rtol,
                                                                  absolute_accuracy=atol)
            kernel_args = KernelArgs(kernel_func=self.kernel_entry, compiler_input=compiler_args,
                                     kernel_input=dict(kernel_input), validation_args=validation)
            if inference_args is not None:
                kernel_args.inference_args = inference_args
            self.test_manager.execute(kernel_args)
