// Hostile kernels after the host's secrets and their inputs' values, end to end through
// nki-agent-worker (docs/sandbox.md, "The environment" and "Values at trace time"):
// - canary variables set in this process before the workers start never reach a kernel, by any of
//   the routes to a process's environment (os.environ, os.getenv, os.environb, posix.environ, a
//   module's globals found through object.__subclasses__(), ctypes' getenv, /proc/self/environ);
// - a kernel reads no value of its tensors by any spelling of the call (getattr, vars, __dict__,
//   operator.methodcaller, a helper module, a closure, a tile), finds no NumPy array of its inputs
//   (walking frames or the garbage collector), and a hook left behind to run after the launch
//   reads nothing either;
// - a host function still reads a kernel's results after the launch, and still runs real files'
//   module-level imports.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/kernel_service.h"
#include "support/shared_service.h"

namespace nki_agent {
namespace {

struct Canary {
  const char* name;
  const char* value;
};
constexpr Canary kCanaries[] = {
    {"ANTHROPIC_API_KEY", "sk-ant-canary-0f3a9c71"},
    {"OPENAI_API_KEY", "sk-oai-canary-51c2d8e4"},
    {"NKIA_CANARY_TOKEN", "canary-token-e4d17b90"},
    {"HF_TOKEN", "hf_canary_8a6b2c"},
};

// A value no input of these tests holds by chance, to look for in memory.
constexpr float kSentinel = 1234.5f;

class KernelSecrets : public testing::SharedServiceTest {
 protected:
  static void SetUpTestSuite() {
    for (const Canary& c : kCanaries) ::setenv(c.name, c.value, 1);
    start_service();
  }
  static void TearDownTestSuite() {
    stop_service();
    for (const Canary& c : kCanaries) ::unsetenv(c.name);
  }

  static SandboxLimits limits() {
    SandboxLimits l;
    l.wall_seconds = 20;
    l.cpu_seconds = 20;
    l.address_space_bytes = int64_t{4} << 30;
    return l;
  }

  static Result<KernelOutcome> run_files(std::map<std::string, std::string> files, const std::string& entry,
                                         bool kernel_only = false) {
    KernelCall c;
    c.src.main_path = "kernel.py";
    c.src.files = std::move(files);
    c.entry = entry;
    std::vector<float> v(128 * 4, 1.0f);
    v[5] = kSentinel;
    c.inputs = {Tensor::from_f32({128, 4}, v)};
    c.input_names = {"x"};
    c.kernel_only = kernel_only;
    return service_->run(c, limits());
  }

  // Everything a tool could pass on from a run: the printed text, the Diagnostic with its notes,
  // the warnings.
  static std::string everything(const Result<KernelOutcome>& r) {
    if (!r) return r.error().format() + "\n" + r.error().to_json().dump();
    std::string s = r->printed;
    for (const Diagnostic& w : r->warnings) s += "\n" + w.format();
    return s;
  }

  // No canary's value in what the run produced; with `names`, not even a canary's name (for routes
  // that list the environment rather than look names up).
  static void expect_no_canary(const Result<KernelOutcome>& r, const std::string& route, bool names) {
    const std::string text = everything(r);
    for (const Canary& c : kCanaries) {
      EXPECT_EQ(text.find(c.value), std::string::npos) << route << " leaked " << c.name << ":\n" << text;
      if (names) {
        EXPECT_EQ(text.find(c.name), std::string::npos) << route << " found the variable " << c.name << ":\n" << text;
      }
    }
  }
};

// ---- the environment ----------------------------------------------------------------------------

// Each route prints what it finds and then fails on purpose, so that its findings reach the
// Diagnostic's message as well as the printed text.
const char* kEnvHeader =
    "import os\nimport numpy as np\n\n"
    "KEYS = ('ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'NKIA_CANARY_TOKEN', 'HF_TOKEN')\n\n"
    "def entry(x):\n";

struct EnvRoute {
  const char* name;
  const char* body;       // prints and raises what it found
  bool sees_environment;  // true: the route works and shows the worker's own (allow-listed) variables
  bool lists = false;     // the route lists every variable (rather than looking names up)
};

const EnvRoute kEnvRoutes[] = {
    {"os.environ", "    found = dict(os.environ)\n    print(found)\n    raise ValueError(repr(found))\n", true, true},
    {"os.getenv", "    found = {k: os.getenv(k) for k in KEYS}\n    print(found)\n    raise ValueError(repr(found))\n",
     false},
    {"os.environb", "    found = dict(os.environb)\n    print(found)\n    raise ValueError(repr(found))\n", true, true},
    {"posix.environ",
     "    import posix\n    found = dict(posix.environ)\n    print(found)\n    raise ValueError(repr(found))\n", true,
     true},
    {"object.__subclasses__",
     "    wc = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]\n"
     "    found = dict(wc.__init__.__globals__['environ'])\n    print(found)\n    raise ValueError(repr(found))\n",
     true, true},
    {"ctypes getenv",
     "    import ctypes\n    libc = ctypes.CDLL(None)\n    libc.getenv.restype = ctypes.c_char_p\n"
     "    found = {k: libc.getenv(k.encode()) for k in KEYS + ('LANG',)}\n    print(found)\n"
     "    raise ValueError(repr(found))\n",
     true},
    {"ctypes environ",
     "    import ctypes\n    libc = ctypes.CDLL(None)\n"
     "    env = ctypes.POINTER(ctypes.c_char_p).in_dll(libc, 'environ')\n    found, i = [], 0\n"
     "    while env[i] is not None and i < 4096:\n        found.append(env[i])\n        i += 1\n"
     "    print(found)\n    raise ValueError(repr(found))\n",
     true, true},
    {"/proc/self/environ",
     "    found = open('/proc/self/environ', 'rb').read()\n    print(found)\n    raise ValueError(repr(found))\n",
     false},
    {"os.open /proc/self/environ",
     "    fd = os.open('/proc/self/environ', os.O_RDONLY)\n    found = os.read(fd, 1 << 16)\n    print(found)\n"
     "    raise ValueError(repr(found))\n",
     false},
};

TEST_F(KernelSecrets, NoHostVariableReachesAKernelByAnyRoute) {
  for (const EnvRoute& route : kEnvRoutes) {
    auto r = run_files({{"kernel.py", std::string(kEnvHeader) + route.body}}, "entry");
    ASSERT_FALSE(r) << route.name << ": the kernel was meant to fail";
    expect_no_canary(r, route.name, route.lists);
    // The route itself worked (so the test looked where a secret would be): it shows the worker's
    // allow-listed locale, or was refused by the sandbox.
    const std::string text = everything(r);
    if (route.sees_environment) {
      EXPECT_NE(text.find("C.UTF-8"), std::string::npos) << route.name << " did not reach the environment:\n" << text;
    } else {
      EXPECT_TRUE(r.error().code == "nkia_sandbox_refused" || text.find("None") != std::string::npos)
          << route.name << ":\n"
          << text;
    }
  }
}

TEST_F(KernelSecrets, TheWorkerEnvironmentIsTheAllowListOnly) {
  auto r =
      run_files({{"kernel.py", std::string(kEnvHeader) + "    print(sorted(os.environ))\n    return x\n"}}, "entry");
  ASSERT_TRUE(r) << r.error().format();
  // Only allow-listed names (docs/sandbox.md); a sanitizer build adds its options.
  for (const char* allowed :
       {"LANG", "LC_ALL", "PATH", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GLIBC_TUNABLES"})
    EXPECT_NE(r->printed.find(std::string("'") + allowed + "'"), std::string::npos) << r->printed;
  for (const char* host : {"'HOME'", "'USER'", "'PWD'", "'SHELL'"})
    EXPECT_EQ(r->printed.find(host), std::string::npos) << host << " reached the kernel: " << r->printed;
}

// ---- values at trace time -----------------------------------------------------------------------

// A kernel that steals x's values by `steal(x)` and returns them, doubled, as a constant.
std::string value_kernel(const std::string& steal, const std::string& prelude = "") {
  return "import gc\nimport inspect\nimport operator\nimport sys\nimport numpy as np\n"
         "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n" +
         prelude + "\n\ndef steal(x):\n" + steal +
         "\n\n@nki.jit\ndef kernel(x):\n"
         "    vals = np.asarray(steal(x), dtype=np.float32).reshape(x.shape)\n"
         "    c = nl.shared_constant(vals * 2)\n"
         "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
         "    nl.store(out, value=nl.load(c))\n"
         "    return out\n";
}

struct ValueRoute {
  const char* name;
  std::string source;
};

std::vector<ValueRoute> value_routes() {
  return {
      {"x.numpy()", value_kernel("    return x.numpy()")},
      {"getattr", value_kernel("    return getattr(x, 'nu' + 'mpy')()")},
      {"vars", value_kernel("    return vars(type(x))['nu' + 'mpy'](x)")},
      {"__dict__", value_kernel("    return type(x).__dict__['numpy'](x)")},
      {"operator.methodcaller", value_kernel("    return operator.methodcaller('num' + 'py')(x)")},
      {"a closure", value_kernel("    read = getattr(x, 'numpy')\n    get = lambda: read()\n    return get()")},
      {"a tile", value_kernel("    return nl.load(x).numpy()")},
      {"a view", value_kernel("    return x[0:128, 0:4].numpy()")},
      {"inspect.getattr_static", value_kernel("    return inspect.getattr_static(x, 'numpy')(x)")},
      {"the class's method on the instance", value_kernel("    return type(x).numpy(x)")},
  };
}

TEST_F(KernelSecrets, AKernelReadsNoValueByAnySpelling) {
  for (const ValueRoute& route : value_routes()) {
    for (bool kernel_only : {false, true}) {
      auto r = run_files({{"kernel.py", route.source}}, "kernel", kernel_only);
      ASSERT_FALSE(r) << route.name << ": the kernel read its input's values";
      EXPECT_EQ(r.error().code, "nkia_trace_time_value_read") << route.name << ": " << r.error().format();
      EXPECT_EQ(r.error().loc.file, "kernel.py") << route.name;
    }
  }
}

TEST_F(KernelSecrets, AHelperModuleReadsNoValueEither) {
  auto r = run_files({{"kernel.py", value_kernel("    return helper.read(x)", "import helper")},
                      {"helper.py", "def read(t):\n    return getattr(t, 'numpy')()\n"}},
                     "kernel");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_trace_time_value_read") << r.error().format();
  EXPECT_EQ(r.error().loc.file, "helper.py");
  EXPECT_EQ(r.error().loc.line, 2);
}

// No NumPy array of the inputs exists in a kernel run: walking the frames above the kernel or
// every object the collector knows finds none. The kernel raises if it finds the sentinel.
TEST_F(KernelSecrets, NoArrayOfTheInputsExistsToBeFound) {
  const std::string search =
      "def holds_sentinel(o):\n"
      "    return isinstance(o, np.ndarray) and o.dtype.kind == 'f' and o.size < 1 << 20 and bool((o == "
      "1234.5).any())\n\n"
      "def search():\n"
      "    seen = []\n"
      "    f = inspect.currentframe()\n"
      "    while f is not None:\n"
      "        seen += list(f.f_locals.values())\n"
      "        for v in list(f.f_locals.values()):\n"
      "            if isinstance(v, (list, tuple, dict)):\n"
      "                seen += list(v.values()) if isinstance(v, dict) else list(v)\n"
      "        f = f.f_back\n"
      "    for o in gc.get_objects():\n"
      "        seen.append(o)\n"
      "        if isinstance(o, (list, tuple, dict)):\n"
      "            seen += gc.get_referents(o)\n"
      "    if any(holds_sentinel(o) for o in seen):\n"
      "        raise RuntimeError('FOUND the input values')\n";
  const std::string src =
      "import gc\nimport inspect\nimport numpy as np\nimport neuronxcc.nki as nki\n"
      "import neuronxcc.nki.language as nl\n\n" +
      search +
      "\n@nki.jit\ndef kernel(x):\n    search()\n"
      "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
      "    nl.store(out, value=nl.load(x))\n    return out\n";
  for (bool kernel_only : {false, true}) {
    auto r = run_files({{"kernel.py", src}}, "kernel", kernel_only);
    ASSERT_TRUE(r) << r.error().format();
    ASSERT_EQ(r->outputs.size(), 1u);
    EXPECT_EQ(r->outputs[0].to_f32_vector()[5], kSentinel);  // the kernel itself computed right
  }
}

// A Diagnostic whose message holds a value (the row an index tile named) ends the run even when the
// kernel catches it: otherwise its message would be a way to read values.
TEST_F(KernelSecrets, AValueDependentErrorEndsTheRunEvenWhenCaught) {
  const std::string src =
      "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n"
      "@nki.jit\ndef kernel(x):\n"
      "    idx = nl.copy(nl.load(x[:, 1:2]), dtype=nl.int32)\n"
      "    try:\n"
      "        rows = nl.load(x[idx, 0:4])\n"
      "    except Exception as e:\n"
      "        print('LEAK', e)\n"
      "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
      "    nl.store(out, value=nl.load(x))\n    return out\n";
  auto r = run_files({{"kernel.py", src}}, "kernel");
  ASSERT_FALSE(r) << "the kernel caught a value-dependent error and went on: " << r->printed;
  EXPECT_EQ(r.error().code, "nkia_indirect_index_out_of_bounds") << r.error().format();
  EXPECT_EQ(r.error().loc.line, 8) << r.error().format();
}

// A profile hook, a finaliser and an atexit function left behind by the kernel run after its
// launch returned; in a run whose entry is the kernel they read nothing either.
TEST_F(KernelSecrets, HooksLeftBehindReadNothingAfterTheLaunch) {
  const std::string src =
      "import atexit\nimport sys\nimport neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n"
      "def try_read(t, how):\n"
      "    try:\n"
      "        print('LEAK', how, float(t.numpy().max()))\n"
      "    except Exception as e:\n"
      "        print('refused', how, type(e).__name__)\n\n"
      "class Later:\n"
      "    def __init__(self, t):\n        self.t = t\n"
      "    def __del__(self):\n        try_read(self.t, 'finaliser')\n\n"
      "KEEP = []\n\n"
      "@nki.jit\ndef kernel(x):\n"
      "    def hook(frame, event, arg):\n"
      "        if event == 'return' and frame.f_code.co_name == '__call__':\n"
      "            sys.setprofile(None)\n"
      "            try_read(x, 'profile hook')\n"
      "    sys.setprofile(hook)\n"
      "    KEEP.append(Later(x))\n"
      "    atexit.register(try_read, x, 'atexit')\n"
      "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
      "    nl.store(out, value=nl.load(x))\n    return out\n";
  auto r = run_files({{"kernel.py", src}}, "kernel");
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->printed.find("LEAK"), std::string::npos) << r->printed;
  EXPECT_NE(r->printed.find("refused profile hook"), std::string::npos) << r->printed;
}

// verify's kernel_only: a plain function entry runs as a kernel launch, so it gets no arrays.
TEST_F(KernelSecrets, APlainFunctionEntryUnderKernelOnlyIsALaunch) {
  const std::string src = "import numpy as np\n\ndef kernel(x):\n    return np.asarray(x) * 2\n";
  auto host = run_files({{"kernel.py", src}}, "kernel", false);
  ASSERT_TRUE(host) << host.error().format();  // a host function: arrays, as a test driver expects
  EXPECT_EQ(host->outputs[0].to_f32_vector()[5], 2 * kSentinel);
  auto sealed = run_files({{"kernel.py", src}}, "kernel", true);
  ASSERT_FALSE(sealed) << "a host computation passed as a kernel";
}

// A host function still launches a kernel and reads its results afterwards.
TEST_F(KernelSecrets, AHostFunctionReadsResultsAfterTheLaunch) {
  const std::string src =
      "import os\nimport sys\nimport argparse\nimport unittest\nimport importlib\nimport logging\n"
      "import numpy as np\nimport numpy.testing as npt\nimport neuronxcc.nki as nki\n"
      "import neuronxcc.nki.language as nl\n\n"
      "@nki.jit\ndef double(x):\n"
      "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
      "    nl.store(out, value=nl.multiply(nl.load(x), 2.0))\n    return out\n\n"
      "def entry(x):\n    y = double(x)\n    npt.assert_allclose(y, np.asarray(x) * 2)\n"
      "    return y + np.float32(y.max())\n";
  auto r = run_files({{"kernel.py", src}}, "entry");
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->outputs[0].to_f32_vector()[5], 4 * kSentinel);
}

}  // namespace
}  // namespace nki_agent
