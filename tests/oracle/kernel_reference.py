"""The NumPy oracle of the kernel suite (tests/unit/test_kernel_suite.cpp, tests/kernels/README.md).

Usage: kernel_reference.py DIR NAME...

Reads DIR/reference.txt (the `# reference:` text of a kernel file) and the inputs DIR/<NAME>.npy,
evaluates the reference in float64 with the inputs bound to their names and `np` to NumPy, and
writes each result as DIR/ref_<i>.npy (float64). A one-line reference is an expression; a longer
one is the body of a function of the inputs and must `return` its result. A tuple or list result
is one output per element. Prints the number of outputs.
"""
import sys
import textwrap

import numpy as np


def main():
    folder, names = sys.argv[1], sys.argv[2:]
    with open(f"{folder}/reference.txt", encoding="utf-8") as f:
        text = textwrap.dedent(f.read()).strip()
    env = {"np": np}
    args = {n: np.load(f"{folder}/{n}.npy").astype(np.float64) for n in names}
    try:
        code = compile(text, "reference", "eval")
        result = eval(code, env, dict(args))
    except SyntaxError:
        body = textwrap.indent(text, "    ")
        src = f"def reference({', '.join(names)}):\n{body}\n"
        exec(compile(src, "reference", "exec"), env)
        result = env["reference"](**args)
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    for i, r in enumerate(outs):
        np.save(f"{folder}/ref_{i}.npy", np.asarray(r, dtype=np.float64))
    print(len(outs))


if __name__ == "__main__":
    main()
