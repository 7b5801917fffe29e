"""nki-agent corpus: the execution filters of generated tasks, in the reference worker's setting.

Run by src/corpus/filters.cpp as `/usr/bin/python3.11 -I -c <this file>` (tasks/subprocess.h:
rlimits, a deadline, a clean one-thread environment), twice over the same batch in two processes:
the two answers' output hashes are the determinism check. It runs only our own generated task.py
files, on the CPU, as tasks/py/reference_worker.py does (no_grad, eval mode, deterministic
algorithms, one thread). Request on stdin:
  {"seed": 0, "runtime_band_s": 2.0, "memory_band_mib": 256,
   "tasks": [{"id", "task_py", "atol", "int_high": {input name: high}}]}
Answer on stdout: {"tasks": {id: {"checks": {name: "pass" | reason}, "hash": hex}}, "peak_rss_mib": n}

Checks, in order (a task stops at its first failure, later checks are "skipped"):
  runs         Model(*get_init_inputs()) and forward(*get_inputs()) without an exception
  finite       every output finite
  not_constant every output takes more than one value
  sensitive    each input changes some output when perturbed (float: + 0.5 N(0, 1) noise;
               integer: every index moved by one, wrapping)
  magnitude    each output's RMS is above 10 x atol (a zero kernel must not pass) and its largest
               magnitude below 1e5 (a relative tolerance stays meaningful)
  runtime      one forward on one thread within runtime_band_s
  memory       inputs, weights and outputs together within memory_band_mib
"""
import hashlib
import json
import resource
import sys
import time


def tensors_of(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def digest(outs):
    h = hashlib.sha256()
    for t in outs:
        h.update(str(tuple(t.shape)).encode())
        h.update(str(t.dtype).encode())
        h.update(t.detach().float().contiguous().numpy().tobytes())
    return h.hexdigest()


def nbytes(t):
    return t.numel() * t.element_size()


def check_task(task, seed, band_s, band_mib):
    checks = {k: "skipped" for k in ("runs", "finite", "not_constant", "sensitive", "magnitude", "runtime", "memory")}
    result = {"checks": checks, "hash": ""}
    ns = {"__name__": "corpus_task"}
    try:
        exec(compile(task["task_py"], "task.py", "exec"), ns)
        torch.manual_seed(seed)
        model = ns["Model"](*ns["get_init_inputs"]()).eval()
        torch.manual_seed(seed + 1)
        inputs = ns["get_inputs"]()
        with torch.no_grad():
            t0 = time.perf_counter()
            outs = tensors_of(model(*inputs))
            elapsed = time.perf_counter() - t0
    except Exception as e:  # the task's own failure, reported as the check's reason
        checks["runs"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        return result
    checks["runs"] = "pass"
    result["hash"] = digest(outs)
    floats = [o.float() for o in outs]
    bad = [i for i, o in enumerate(floats) if not torch.isfinite(o).all()]
    if bad:
        checks["finite"] = "output %d has non-finite values" % bad[0]
        return result
    checks["finite"] = "pass"
    const = [i for i, o in enumerate(floats) if o.numel() < 2 or bool((o == o.view(-1)[0]).all())]
    if const:
        checks["not_constant"] = "output %d is constant" % const[0]
        return result
    checks["not_constant"] = "pass"
    gen = torch.Generator().manual_seed(seed + 2)
    for i, x in enumerate(inputs):
        if x.dtype in (torch.int64, torch.int32):
            high = int(task.get("int_high", {}).get(str(i), int(x.max()) + 1))
            y = (x + 1) % max(high, 1)
        else:
            y = (x.float() + 0.5 * torch.randn(x.shape, generator=gen)).to(x.dtype)
        pert = list(inputs)
        pert[i] = y
        with torch.no_grad():
            outs2 = [o.float() for o in tensors_of(model(*pert))]
        if all(torch.equal(a, b) for a, b in zip(floats, outs2)):
            checks["sensitive"] = "no output changes with input %d" % i
            return result
    checks["sensitive"] = "pass"
    atol = float(task["atol"])
    for i, o in enumerate(floats):
        rms = float(o.pow(2).mean().sqrt())
        big = float(o.abs().max())
        if rms <= 10 * atol:
            checks["magnitude"] = "output %d: RMS %.3g is within 10 x atol (%g)" % (i, rms, atol)
            return result
        if big >= 1e5:
            checks["magnitude"] = "output %d: magnitude %.3g reaches 1e5" % (i, big)
            return result
    checks["magnitude"] = "pass"
    checks["runtime"] = "pass" if elapsed <= band_s else "forward took %.2f s (band %.1f s)" % (elapsed, band_s)
    if checks["runtime"] != "pass":
        return result
    total = sum(nbytes(t) for t in inputs) + sum(nbytes(p) for p in model.state_dict().values()) + \
        sum(nbytes(o) for o in outs)
    mib = total / (1 << 20)
    checks["memory"] = "pass" if mib <= band_mib else "%.0f MiB of tensors (band %d MiB)" % (mib, band_mib)
    return result


def main():
    global torch
    req = json.loads(sys.stdin.read())
    import torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    out = {}
    for task in req["tasks"]:
        out[task["id"]] = check_task(task, int(req.get("seed", 0)), float(req.get("runtime_band_s", 2.0)),
                                     int(req.get("memory_band_mib", 256)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stdout.write(json.dumps({"tasks": out, "peak_rss_mib": round(peak)}, sort_keys=True))


if __name__ == "__main__":
    main()
