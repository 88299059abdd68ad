#!/usr/bin/python3
"""Train the public reference code's NNGP (LaurenceA/bayesfunc, branch master) on MNIST under the
DKP paper's Table 2 protocol as dkp runs it (experiments/dkp-mnist.yaml, NNGP cell, ReLU, depth 3),
and report its ELBO, test log-likelihood and accuracy.

This script is our own code. It contains none of bayesfunc's code: it extracts bayesfunc from a
git mirror at run time into a scratch directory outside the repository and imports it from there:
    git --git-dir=$BAYESFUNC_GIT_DIR archive master | tar -x -C $TMPDIR/peer-mnist/master

Run with the SYSTEM python (Debian python3-torch); the pyenv `python3` shim has no torch:

    BAYESFUNC_GIT_DIR=/path/to/bayesfunc.git /usr/bin/python3 bench/peer/bayesfunc_mnist.py \
        --out results/reference/code/runs/bayesfunc-nngp-mnist.json
    ... --steps 20 --no-eval            # timing check
    ... --init-targets                  # v starts one-hot at the inducing points' labels (dkp's start)

Model (bayesfunc master modules; --depth D = dkp's --depth = number of ReLU kernel applications):
    InducingWrapper[FeaturesToKernel(P) -> ReluKernelGram x D -> GIGP(10)] -> softmax (Categorical)
  G1 = X X^T / 784 (no bias feature, no learned input scale or bias, no learned output scale);
  dkp --depth 3 = G1, two hidden ReLU maps, and the third ReLU map feeding the output layer.
  P = 100 inducing inputs, initialised to np.random.RandomState(0).choice(60000, 100) training
  images (learned, bayesfunc's InducingAdd default). GIGP defaults: pseudo-targets u ~ N(0, 1)
  (P x 10), L_loc = I, L_scale = 0.5 * log_prec_init = -2 (precision e^-4 I).
Data: MNIST IDX files, pixels x/255 then (x - 0.1307) / 0.3081; 60000 train / 10000 test.
Protocol: 8000 Adam steps, lr 1e-2 then 1e-3 from step 4000 (0-based), minibatches of 1000 from
  shuffled epochs, 1 MC sample per step, KL weight min(step/500, 1) (0-based step), float64, seed 0.
  Loss per datapoint: -(mean_n log p(y_n | f_n) + w * logpq / 60000).
  --steps S < 8000 scales the lr drop and the annealing proportionally unless given explicitly.
Evaluation (no_grad): ELBO/N = mean and standard error of --eval-reps estimates, each from
  --eval-samples samples on the full training set in one pass (KL weight 1); test LL =
  mean_n log mean_{s<100} softmax(f_s)_{y_n}; accuracy of argmax_c mean_s softmax(f_s)_c.
  Each of the 100 test samples is one pass over all 10000 test images (one joint draw).
Threads / allocator: re-executes itself once with OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1 and
  a glibc malloc tuned not to trim or mmap (GLIBC_TUNABLES), and calls torch.set_num_threads(1).
"""
import argparse
import gzip
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

TUNED_MALLOC = ("glibc.malloc.mmap_threshold=4294967296:"
                "glibc.malloc.trim_threshold=4294967296")
MEAN, SD = 0.1307, 0.3081


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(os.environ.get("DKP_DATA", "data"), "mnist"),
                    help="the MNIST IDX files (default: $DKP_DATA/mnist)")
    ap.add_argument("--depth", type=int, default=3, help="ReLU kernel applications (dkp --depth)")
    ap.add_argument("--steps", type=int, default=8000)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--lr2", type=float, default=1e-3)
    ap.add_argument("--lr-drop", type=int, default=None, help="default steps/2")
    ap.add_argument("--kl-anneal", type=int, default=None, help="default steps/16 (500 at 8000)")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=1)
    ap.add_argument("--P", type=int, default=100)
    ap.add_argument("--init-targets", action="store_true",
                    help="start the output GIGP's pseudo-targets one-hot at the inducing points' "
                         "labels (dkp's start); default: bayesfunc's N(0, 1)")
    ap.add_argument("--eval-reps", type=int, default=10)
    ap.add_argument("--eval-samples", type=int, default=1)
    ap.add_argument("--test-samples", type=int, default=100)
    ap.add_argument("--no-eval", action="store_true", help="training only (timing check)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log-every", type=int, default=100)
    ap.add_argument("--trace-every", type=int, default=500)
    ap.add_argument("--mirror", default=os.environ.get("BAYESFUNC_GIT_DIR", ""))
    ap.add_argument("--bf-root", default=os.path.join(tempfile.gettempdir(), "peer-mnist"))
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if args.lr_drop is None:
        args.lr_drop = args.steps // 2
    if args.kl_anneal is None:
        args.kl_anneal = max(1, round(args.steps * 500 / 8000))
    if args.out:   # main() moves cwd to the temp dir
        args.out = os.path.abspath(args.out)
    args.data = os.path.abspath(args.data)
    return args


def ensure_env():
    want = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "GLIBC_TUNABLES": TUNED_MALLOC}
    if all(os.environ.get(k) == v for k, v in want.items()):
        return
    if os.environ.get("_BF_MNIST_REEXEC"):
        raise SystemExit("environment could not be set: " + repr(want))
    env = dict(os.environ, _BF_MNIST_REEXEC="1", **want)
    script = os.path.abspath(sys.argv[0])
    os.execve(sys.executable, [sys.executable, script] + sys.argv[1:], env)


def extract(mirror, root, branch="master"):
    dest = os.path.join(root, branch)
    repo = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    if os.path.realpath(dest).startswith(repo + os.sep):
        raise SystemExit(f"refusing to extract bayesfunc inside the repository ({dest})")
    commit = subprocess.check_output(["git", "--git-dir", mirror, "rev-parse", branch],
                                     text=True).strip()
    stamp = os.path.join(dest, ".extracted_commit")
    if os.path.isfile(stamp) and open(stamp).read().strip() == commit:
        return dest, commit
    os.makedirs(dest, exist_ok=True)
    arch = subprocess.Popen(["git", "--git-dir", mirror, "archive", branch], stdout=subprocess.PIPE)
    subprocess.check_call(["tar", "-x", "-C", dest], stdin=arch.stdout)
    arch.stdout.close()
    if arch.wait() != 0:
        raise RuntimeError(f"git archive {branch} failed")
    with open(stamp, "w") as f:
        f.write(commit + "\n")
    return dest, commit


def read_idx(path):
    import numpy as np
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def main():
    args = parse_args()
    ensure_env()
    bf_dir, commit = extract(args.mirror, args.bf_root)
    os.chdir(tempfile.gettempdir())   # never inside bayesfunc/ (its random.py shadows stdlib)
    sys.path.insert(0, bf_dir)

    import warnings
    warnings.filterwarnings("ignore")  # torch.cholesky / triangular_solve deprecations
    import numpy as np
    import torch as t
    import torch.nn as nn
    from torch.distributions import Categorical
    import bayesfunc as bf

    t.set_num_threads(1)
    t.set_default_dtype(t.float64)
    t.manual_seed(args.seed)
    np.random.seed(args.seed)

    # ---------------- data ----------------------------------------------------------------
    def load(prefix):
        X = read_idx(os.path.join(args.data, f"{prefix}-images-idx3-ubyte.gz"))
        y = read_idx(os.path.join(args.data, f"{prefix}-labels-idx1-ubyte.gz"))
        X = (X.reshape(X.shape[0], -1).astype(np.float64) / 255.0 - MEAN) / SD
        return t.from_numpy(X), t.from_numpy(y.astype(np.int64))
    Xtr, ytr = load("train")
    Xte, yte = load("t10k")
    N, N0 = Xtr.shape
    C = int(ytr.max()) + 1
    P = args.P
    idx = t.from_numpy(np.random.RandomState(0).choice(N, P, replace=False))
    Z = Xtr[idx].clone()

    # ---------------- model ---------------------------------------------------------------
    gp_kw = dict(inducing_batch=P)
    onehot = (t.arange(C) == ytr[idx][:, None]).to(t.float64)
    if args.init_targets:
        gp_kw["inducing_targets"] = onehot
    layers = ([bf.FeaturesToKernel(P)] + [bf.ReluKernelGram() for _ in range(args.depth)]
              + [bf.GIGP(C, **gp_kw)])
    net = bf.InducingWrapper(nn.Sequential(*layers), P, inducing_data=Z).double()
    gigp = layers[-1]
    with t.no_grad():   # InducingAdd / GIGP round their inits through float32
        net[0].inducing_data.copy_(Z)
        if args.init_targets:
            gigp.u.copy_(onehot)
    params = [p for p in net.parameters() if p.requires_grad]
    n_params = sum(p.numel() for p in params)
    print(f"# bayesfunc master@{commit[:7]} ({bf_dir}); torch {t.__version__}, threads "
          f"{t.get_num_threads()}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    print(f"# MNIST N={N} train / {Xte.shape[0]} test, N0={N0}, C={C}; P={P}; "
          f"InducingWrapper[FeaturesToKernel -> ReluKernelGram x {args.depth} -> GIGP({C})] -> "
          f"Categorical; {n_params} trainable params: "
          + ", ".join(f"{n} {tuple(p.shape)}" for n, p in net.named_parameters()))
    print(f"# v init: {'one-hot labels' if args.init_targets else 'bayesfunc N(0,1)'}; "
          f"L_scale {float(gigp.L_scale):.3f}")
    print(f"# protocol: {args.steps} Adam steps, lr {args.lr} then {args.lr2} from step "
          f"{args.lr_drop}; KL weight min(step/{args.kl_anneal},1); batch {args.batch}; "
          f"S={args.samples}; float64; seed {args.seed}", flush=True)

    def terms(X, y, S):
        out, logpq, _ = bf.propagate(net, X.expand(S, -1, -1))
        ll = Categorical(logits=out).log_prob(y).mean(-1)     # (S,)
        logpq = logpq if t.is_tensor(logpq) else t.zeros(S)
        return ll, logpq

    opt = t.optim.Adam(params, lr=args.lr)
    B = args.batch
    perm, pos = None, 0
    trace, win = [], []
    t0, c0 = time.perf_counter(), time.process_time()
    for step in range(args.steps):
        lr = args.lr if step < args.lr_drop else args.lr2
        for g in opt.param_groups:
            g["lr"] = lr
        w = min(step / args.kl_anneal, 1.0)
        if perm is None or pos + B > N:
            perm, pos = t.randperm(N), 0
        bi = perm[pos:pos + B]
        pos += B
        opt.zero_grad()
        ll, logpq = terms(Xtr[bi], ytr[bi], args.samples)
        loss = -(ll + w * logpq / N).mean()
        loss.backward()
        opt.step()
        win.append((float((ll + logpq / N).mean()), float(ll.mean()), float(-(logpq / N).mean())))
        s1 = step + 1
        if s1 % args.log_every == 0 or s1 == args.steps or step == 0:
            el = time.perf_counter() - t0
            m = [sum(v[i] for v in win[-args.log_every:]) / len(win[-args.log_every:])
                 for i in range(3)]
            print(f"step {s1:5d} lr {lr:.0e} klw {w:.3f}  ELBO(w=1) {m[0]:+.4f}  E[ll]/N "
                  f"{m[1]:+.4f}  KL/N {m[2]:.4f}  L_scale {float(gigp.L_scale):+.3f}  "
                  f"{el:7.1f}s ({1e3 * el / s1:.1f} ms/step)", flush=True)
        if s1 % args.trace_every == 0 or s1 == args.steps or step == 0:
            m = [sum(v[i] for v in win) / len(win) for i in range(3)]
            trace.append(dict(step=s1, elbo=m[0], ll=m[1], kl=m[2], L_scale=float(gigp.L_scale),
                              t=time.perf_counter() - t0, window=len(win)))
            win = []
    train_s, train_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"# training: {train_s:.1f} s wall, {train_cpu:.1f} s CPU", flush=True)
    if args.no_eval:
        return

    # ---------------- final evaluation -----------------------------------------------------
    t1, c1 = time.perf_counter(), time.process_time()
    with t.no_grad():
        ests, lls, kls = [], [], []
        for _ in range(args.eval_reps):
            ll, logpq = terms(Xtr, ytr, args.eval_samples)
            ests.append(float((ll + logpq / N).mean()))
            lls += [float(v) for v in ll]
            kls += [float(v) for v in -(logpq / N)]
        R = len(ests)
        elbo = sum(ests) / R
        elbo_se = math.sqrt(sum((e - elbo) ** 2 for e in ests) / (R - 1) / R) if R > 1 else 0.0
        exp_ll, kl = sum(lls) / len(lls), sum(kls) / len(kls)
        elbo_s = time.perf_counter() - t1
        Ts = args.test_samples
        logp = t.empty(Ts, Xte.shape[0], C)
        for s in range(Ts):
            out, _, _ = bf.propagate(net, Xte.expand(1, -1, -1))
            logp[s] = out[0].log_softmax(-1)
        pred = t.logsumexp(logp, 0) - math.log(Ts)                # log mean_s softmax
        test_ll = float(pred.gather(1, yte[:, None]).mean())
        acc = float((pred.argmax(-1) == yte).double().mean())
    eval_s, eval_cpu = time.perf_counter() - t1, time.process_time() - c1
    res = dict(model="nngp", kernel="relu", dataset="mnist", depth=args.depth, steps=args.steps,
               lr_drop=args.lr_drop, kl_anneal=args.kl_anneal, batch=B, samples=args.samples,
               N=N, N0=N0, P=P, classes=C, n_params=n_params, init_targets=args.init_targets,
               v_init="one-hot labels" if args.init_targets else "bayesfunc N(0,1)",
               pixels="x/255, (x-0.1307)/0.3081", branch="master", commit=commit,
               elbo=elbo, elbo_se=elbo_se, elbo_estimates=ests,
               elbo_eval=f"{R} estimates x {args.eval_samples} sample(s), full training set, "
                         "one pass each",
               exp_ll=exp_ll, kl=kl, test_ll=test_ll, accuracy=acc, test_samples=Ts,
               L_scale=float(gigp.L_scale), train_s=train_s, train_cpu_s=train_cpu,
               elbo_eval_s=elbo_s, eval_s=eval_s, eval_cpu_s=eval_cpu,
               peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
               torch=t.__version__, threads=1, trace=trace)
    print(f"FINAL nngp mnist depth {args.depth} steps {args.steps}: ELBO/N {elbo:+.4f} +- "
          f"{elbo_se:.4f}  E[ll]/N {exp_ll:+.4f}  KL/N {kl:.4f}  test LL {test_ll:+.4f}  "
          f"acc {acc:.4f}  train {train_s:.1f}s wall {train_cpu:.1f}s CPU, eval {eval_s:.1f}s",
          flush=True)
    if args.out:   # written whole or not at all
        with open(args.out + ".tmp", "w") as f:
            json.dump(res, f, indent=1)
        os.replace(args.out + ".tmp", args.out)
    print("RESULT " + json.dumps({k: v for k, v in res.items() if k != "trace"}), flush=True)


if __name__ == "__main__":
    main()
