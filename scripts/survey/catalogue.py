# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The catalogue of tensors the survey feeds through each framework: the same cases, in
the same order, spelled in each framework's own words.

Every case is a Python expression, shown as it is on the page, evaluated in a namespace
holding the framework's modules. None means the framework has no such tensor at all (the
reason says why); an expression that raises is recorded as "not made", with the exception.
"""

# The cases every framework is asked for, in the order of the page.
LAYOUTS = ["contiguous", "transposed", "sliced with a step", "size-1 dim", "reversed", "broadcast", "0-d", "empty",
           "read-only"]
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
          "float32", "float64", "complex64", "complex128"]


def _layouts(base, transposed, sliced, size1, reversed_, broadcast, zero_d, empty, read_only):
    return dict(zip(LAYOUTS, [base, transposed, sliced, size1, reversed_, broadcast, zero_d, empty, read_only]))


def _dtypes(template, spelled, missing=None):
    """One small tensor per dtype: template.format(dtype) with each dtype as `spelled`
    writes it; `missing` maps the dtypes the framework lacks to the reason."""
    missing = missing or {}
    return {name: (None, missing[name]) if name in missing else template.format(spelled(name)) for name in DTYPES}


NUMPY_DTYPE = lambda name: ("ml_dtypes." + name if name == "bfloat16" or name.startswith("float8")  # noqa: E731
                            else "np.bool_" if name == "bool" else "np." + name)
NUMPY_2D = "np.arange(24, dtype=np.float32).reshape(4, 6)"


def numpy():
    cases = _layouts(NUMPY_2D, NUMPY_2D + ".T", NUMPY_2D + "[1:, ::2]", NUMPY_2D + "[1:2]", NUMPY_2D + "[::-1]",
                     "np.broadcast_to(np.arange(6, dtype=np.float32), (4, 6))", "np.array(3.5, dtype=np.float32)",
                     "np.zeros((0, 3), dtype=np.float32)", "np.frombuffer(bytes(24), dtype=np.float32).reshape(2, 3)")
    cases.update(_dtypes("np.arange(4).astype({})", NUMPY_DTYPE))
    return {"title": "NumPy", "distributions": ["numpy", "ml_dtypes"], "imports": ["import numpy as np"],
            "optional_imports": ["import ml_dtypes"], "cases": cases, "spacer": "np.empty({n}, dtype=np.uint8)"}


TORCH_2D = "torch.arange(24, dtype=torch.float32).reshape(4, 6)"


def torch():
    cases = _layouts(TORCH_2D, TORCH_2D + ".T", TORCH_2D + "[1:, ::2]", TORCH_2D + "[1:2]", TORCH_2D + "[::-1]",
                     "torch.arange(6, dtype=torch.float32).expand(4, 6)", "torch.tensor(3.5)", "torch.zeros(0, 3)",
                     "torch.utils.dlpack.ReadOnlyTensorWrapper(torch.arange(6.0))")
    cases.update(_dtypes("torch.arange(4).to({})", lambda name: "torch." + name))
    # PyTorch's semantic bits: state beside the memory that DLPack cannot carry.
    cases.update({"requires_grad": "torch.ones(3, requires_grad=True)",
                  "conjugate view": "torch.tensor([1 + 2j]).conj()",
                  "negated view": "torch.tensor([1 + 2j]).conj().imag"})
    return {"title": "PyTorch", "distributions": ["torch"], "imports": ["import torch", "import torch.utils.dlpack"],
            "cases": cases, "spacer": "torch.empty({n}, dtype=torch.uint8)"}


JAX_2D = "jnp.arange(24, dtype=jnp.float32).reshape(4, 6)"


def jax():
    cases = _layouts(JAX_2D, JAX_2D + ".T", JAX_2D + "[1:, ::2]", JAX_2D + "[1:2]", JAX_2D + "[::-1]",
                     "jnp.broadcast_to(jnp.arange(6, dtype=jnp.float32), (4, 6))", "jnp.array(3.5, dtype=jnp.float32)",
                     "jnp.zeros((0, 3), dtype=jnp.float32)", (None, "every JAX array is immutable: see the rows above"))
    cases.update(_dtypes("jnp.arange(4).astype({})", lambda name: "jnp.bool_" if name == "bool" else "jnp." + name))
    return {"title": "JAX", "distributions": ["jax", "jaxlib"], "imports": ["import jax", "import jax.numpy as jnp"],
            "cases": cases, "spacer": "jnp.zeros({n}, dtype=jnp.uint8)",
            "note": "JAX's defaults (no `jax_enable_x64`): 64-bit dtypes are made as their 32-bit kin, as users get them."}


TF_2D = "tf.reshape(tf.range(24, dtype=tf.float32), (4, 6))"


def tensorflow():
    cases = _layouts(TF_2D, "tf.transpose(" + TF_2D + ")", TF_2D + "[1:, ::2]", TF_2D + "[1:2]", TF_2D + "[::-1]",
                     "tf.broadcast_to(tf.range(6, dtype=tf.float32), (4, 6))", "tf.constant(3.5)",
                     "tf.zeros((0, 3))", (None, "every TensorFlow tensor is immutable: see the rows above"))
    # From floats: TensorFlow casts int32 to no float8 type.
    cases.update(_dtypes("tf.cast(tf.range(4.0), {})",
                         lambda name: "tf.dtypes.experimental." + name if name.startswith("float8") else "tf." + name))
    return {"title": "TensorFlow", "distributions": ["tensorflow-cpu", "tensorflow"], "imports": ["import tensorflow as tf"],
            "cases": cases, "spacer": "tf.zeros({n}, dtype=tf.uint8)"}


def pyarrow():
    # pa.Array is 1-D; pa.Tensor (from NumPy, zero copy) carries the strided cases.
    def tensor(np_expression):
        return "pa.Tensor.from_numpy(" + np_expression + ")"

    cases = _layouts(tensor(NUMPY_2D), tensor(NUMPY_2D + ".T"), tensor(NUMPY_2D + "[1:, ::2]"),
                     tensor(NUMPY_2D + "[1:2]"), tensor(NUMPY_2D + "[::-1]"),
                     tensor("np.broadcast_to(np.arange(6, dtype=np.float32), (4, 6))"),
                     tensor("np.array(3.5, dtype=np.float32)"), "pa.array(np.zeros(0, dtype=np.float32))",
                     (None, "Arrow data is immutable: see the rows above"))
    no_type = "Arrow has no such type"
    cases.update(_dtypes("pa.array(np.arange(4).astype({}))", NUMPY_DTYPE,
                         {name: no_type for name in ["bfloat16", "float8_e4m3fn", "float8_e5m2", "complex64",
                                                     "complex128"]}))
    cases.update({"Array slice (offset)": "pa.array(np.arange(8, dtype=np.float32)).slice(3, 4)",
                  "Array with nulls": "pa.array([1.0, None, 3.0])"})
    return {"title": "pyarrow", "distributions": ["pyarrow", "numpy"], "imports": ["import pyarrow as pa", "import numpy as np"],
            "cases": cases, "spacer": "pa.array(np.zeros({n}, dtype=np.uint8))"}


def tvm_ffi():
    # tvm-ffi has no array constructors of its own: its tensors wrap NumPy's (and PyTorch's
    # for the dtypes NumPy cannot export) through tvm_ffi.from_dlpack.
    def wrap(expression):
        return "tvm_ffi.from_dlpack(" + expression + ")"

    base = {name: wrap(expr) for name, expr in numpy()["cases"].items() if name in LAYOUTS}
    cases = _layouts(*[base[name] for name in LAYOUTS])
    cases.update(_dtypes(wrap("np.arange(4).astype({})"), NUMPY_DTYPE))
    for name in ["bfloat16", "float8_e4m3fn", "float8_e5m2"]:
        cases[name] = wrap("torch.arange(4).to(torch.{})".format(name))
    return {"title": "tvm-ffi", "distributions": ["apache-tvm-ffi", "numpy"],
            "imports": ["import tvm_ffi", "import numpy as np"],
            "optional_imports": ["import ml_dtypes", "import torch"],
            "cases": cases, "spacer": "tvm_ffi.from_dlpack(np.empty({n}, dtype=np.uint8))"}


DPNP_2D = "dpnp.arange(24, dtype=dpnp.float32, device='cpu').reshape(4, 6)"


def dpnp():
    cases = _layouts(DPNP_2D, DPNP_2D + ".T", DPNP_2D + "[1:, ::2]", DPNP_2D + "[1:2]", DPNP_2D + "[::-1]",
                     "dpnp.broadcast_to(dpnp.arange(6, dtype=dpnp.float32, device='cpu'), (4, 6))",
                     "dpnp.array(3.5, dtype=dpnp.float32, device='cpu')",
                     "dpnp.zeros((0, 3), dtype=dpnp.float32, device='cpu')",
                     (None, "dpnp arrays are always writable"))
    no_type = "dpnp has no such dtype"
    cases.update(_dtypes("dpnp.arange(4, device='cpu').astype({})",
                         lambda name: "dpnp.bool" if name == "bool" else "dpnp." + name,
                         {name: no_type for name in ["bfloat16", "float8_e4m3fn", "float8_e5m2"]}))
    return {"title": "dpnp", "distributions": ["dpnp", "dpctl", "intel-opencl-rt"], "imports": ["import dpnp"],
            "cases": cases, "spacer": "dpnp.empty({n}, dtype=dpnp.uint8, device='cpu')",
            "note": "On the SYCL CPU device of Intel's OpenCL runtime (device memory: kDLOneAPI)."}


PADDLE_2D = "paddle.arange(24, dtype='float32').reshape([4, 6])"


def paddle():
    cases = _layouts(PADDLE_2D, PADDLE_2D + ".T", PADDLE_2D + "[1:, ::2]", PADDLE_2D + "[1:2]", PADDLE_2D + "[::-1]",
                     "paddle.broadcast_to(paddle.arange(6, dtype='float32'), [4, 6])", "paddle.to_tensor(3.5)",
                     "paddle.zeros([0, 3])", (None, "Paddle tensors are always writable"))
    cases.update(_dtypes("paddle.arange(4).astype('{}')", lambda name: name))
    return {"title": "PaddlePaddle", "distributions": ["paddlepaddle"], "imports": ["import paddle"],
            "cases": cases, "spacer": "paddle.empty([{n}], dtype='uint8')",
            "note": "Paddle's `__dlpack_device__` returns `(kDLCPU, None)` for these tensors: no device id."}


MINDSPORE_2D = "ms.Tensor(np.arange(24, dtype=np.float32).reshape(4, 6))"


def mindspore():
    # MindSpore's tensors have no __dlpack__: mindspore.utils.dlpack.to_dlpack(x) hands a
    # capsule over, which the import way is given (the other two ways ask x itself).
    cases = _layouts(MINDSPORE_2D, MINDSPORE_2D + ".T", MINDSPORE_2D + "[1:, ::2]", MINDSPORE_2D + "[1:2]",
                     MINDSPORE_2D + "[::-1]", "ms.ops.broadcast_to(ms.Tensor(np.arange(6, dtype=np.float32)), (4, 6))",
                     "ms.Tensor(3.5, ms.float32)", "ms.ops.zeros((0, 3), ms.float32)",
                     (None, "MindSpore tensors are always writable"))
    # Not float8: MindSpore's CPU Cast has no float8 kernel, and its error surfaces
    # asynchronously, in whichever later call (the next case's) waits on the work.
    cases.update(_dtypes("ms.Tensor(np.arange(4)).astype({})",
                         lambda name: "ms.bool_" if name == "bool" else "ms." + name,
                         {name: "MindSpore's CPU `Cast` has no float8 kernel" for name in ["float8_e4m3fn",
                                                                                          "float8_e5m2"]}))
    return {"title": "MindSpore", "distributions": ["mindspore", "numpy"],
            "imports": ["import mindspore as ms", "import numpy as np", "from mindspore.utils.dlpack import to_dlpack"],
            "export": "to_dlpack", "cases": cases, "spacer": "ms.Tensor(np.zeros({n}, dtype=np.uint8))",
            "note": "MindSpore's tensors have no `__dlpack__`: the import column is given "
                    "`mindspore.utils.dlpack.to_dlpack(x)`, its one export (a capsule). NumPy 1.26 beside it: "
                    "MindSpore's C++ parser is built against NumPy 1.x."}


WARP_2D = "wp.array(np.arange(24, dtype=np.float32).reshape(4, 6), device='cpu')"


def warp():
    cases = _layouts(WARP_2D, WARP_2D + ".transpose()", WARP_2D + "[1:, ::2]", WARP_2D + "[1:2]", WARP_2D + "[::-1]",
                     (None, "Warp has no broadcasting view"), (None, "Warp has no 0-d arrays"),
                     "wp.zeros((0, 3), dtype=wp.float32, device='cpu')", (None, "Warp arrays are always writable"))
    cases.update(_dtypes("wp.array(np.arange(4), dtype={}, device='cpu')", lambda name: "wp." + name,
                         {name: "Warp has no such dtype" for name in ["float8_e4m3fn", "float8_e5m2", "complex64",
                                                                      "complex128"]}))
    return {"title": "Warp", "distributions": ["warp-lang", "numpy"],
            "imports": ["import warp as wp", "import numpy as np"],
            "cases": cases, "spacer": "wp.empty({n}, dtype=wp.uint8, device='cpu')",
            "note": "NVIDIA Warp on its CPU device (no CUDA driver on the machine)."}


MLX_2D = "mx.arange(24, dtype=mx.float32).reshape(4, 6)"


def mlx():
    cases = _layouts(MLX_2D, MLX_2D + ".T", MLX_2D + "[1:, ::2]", MLX_2D + "[1:2]", MLX_2D + "[::-1]",
                     "mx.broadcast_to(mx.arange(6, dtype=mx.float32), (4, 6))", "mx.array(3.5)",
                     "mx.zeros((0, 3))", (None, "MLX arrays are immutable: see the rows above"))
    cases.update(_dtypes("mx.arange(4).astype({})", lambda name: "mx.bool_" if name == "bool" else "mx." + name,
                         {name: "MLX has no such dtype" for name in ["float8_e4m3fn", "float8_e5m2", "complex128"]}))
    return {"title": "MLX", "distributions": ["mlx", "mlx-cpu"], "imports": ["import mlx.core as mx"],
            "cases": cases, "spacer": "mx.zeros({n}, dtype=mx.uint8)",
            "note": "MLX's CPU build (`mlx-cpu`); its arrays are lazy and computed when exported."}


def tinygrad():
    # No DLPack at all: the probe checks that this is still so (a tinygrad that gains
    # __dlpack__ or from_dlpack fails the check, to be given a catalogue).
    return {"title": "tinygrad", "distributions": ["tinygrad"], "imports": ["import tinygrad"],
            "no_dlpack": {"made": "tinygrad.Tensor([1.0, 2.0, 3.0])", "module": "tinygrad",
                          "reason": "its Tensor has no `__dlpack__`, `__dlpack_device__` or exchange API, and "
                                    "tinygrad no `from_dlpack` or `to_dlpack`"},
            "cases": {}}


CATALOGUES = {"numpy": numpy, "torch": torch, "jax": jax, "tensorflow": tensorflow, "pyarrow": pyarrow,
              "tvm_ffi": tvm_ffi, "dpnp": dpnp,
              "paddle": paddle, "mindspore": mindspore, "warp": warp, "mlx": mlx, "tinygrad": tinygrad}
