"""What a compiled training step costs around its program: the TF softmax tutorial's step
(batch 100, 784 -> 10, GradientDescent) timed layer by layer in one process, CPU and wall
microseconds per step over many steps:

    native       the compiled program through the runtime's trampoline (no Python checks)
    exe.run      CpuExecutable.run: argument checks, output buffers, the call
    plan step    the session's cluster step: the variables' values, the compiled program
                 for their signature, storing the updated variables
    sess.run     the whole Session.run(train_step, {x: ..., y_: ...}) under XLA (ON_1)
    executor     the same sess.run without XLA (NumPy kernels, one step per op)

    .venv/bin/python benchmarks/compat_step_overhead.py [--steps 3000] [--rounds 7] [--quick]

The layers take turns, round after round, so a spell of load hits all alike; each prints
its minimum and median over the rounds. The batches cycle through 50 real ones (the data
pipeline is not timed). On a shared machine read the CPU columns (process time, all
threads); OpenBLAS runs on one thread so that its spinning threads do not count.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import xlapy.compat.v1 as tf
from xlapy.compat.v1.examples.tutorials.mnist import input_data


def build(xla: bool, batches: list):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 784])
        w = tf.Variable(tf.zeros([784, 10]))
        b = tf.Variable(tf.zeros([10]))
        y = tf.matmul(x, w) + b
        y_ = tf.placeholder(tf.float32, [None, 10])
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        init = tf.global_variables_initializer()
    config = tf.ConfigProto()
    if xla:
        config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    sess = tf.Session(graph=graph, config=config)
    sess.run(init)
    for bx, by in batches[:5]:  # (lazy compilation: the second run compiles)
        sess.run(train, {x: bx, y_: by})
    return sess, train, x, y_


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=3000, help="steps per round and layer")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="300 steps, 3 rounds")
    args = p.parse_args(argv)
    steps, rounds = (300, 3) if args.quick else (args.steps, args.rounds)
    mnist = input_data.read_data_sets("/nonexistent", one_hot=True, seed=0)
    batches = [mnist.train.next_batch(100) for _ in range(50)]
    sess, train, x, y_ = build(True, batches)
    ref, ref_train, rx, ry = build(False, batches)
    plan = next(p for p in sess._plans.values() if p.clusters)
    cc = plan.clusters[0]
    exe, extra, _ = next(iter(cc.cache.values()))
    tramp = exe._trampoline
    step = plan.steps[0]
    slots = [slot for _, slot, _, _ in plan.feeds]
    fed = [(bx, by) for bx, by in batches]
    feeds = [{x: bx, y_: by} for bx, by in batches]
    ref_feeds = [{rx: bx, ry: by} for bx, by in batches]

    def native(i):
        bx, by = fed[i % 50]
        args = (bx, by, *[cc.store[n] for n in cc.read_names], *extra)
        outs = exe._take_outputs()
        tramp(args, outs, exe._arena_ptr, exe._entry_addr, exe._desc_ptr)

    def exe_run(i):
        bx, by = fed[i % 50]
        exe.run(bx, by, *[cc.store[n] for n in cc.read_names], *extra)

    vals = list(plan.template)

    def plan_step(i):
        vals[slots[0]], vals[slots[1]] = fed[i % 50]
        step(vals)

    layers = {"native": native if tramp is not None else None, "exe.run": exe_run,
              "plan step": plan_step,
              "sess.run": lambda i: sess.run(train, feeds[i % 50]),
              "executor": lambda i: ref.run(ref_train, ref_feeds[i % 50])}
    layers = {k: f for k, f in layers.items() if f is not None}
    times: dict = {k: [] for k in layers}
    for _ in range(rounds):
        for name, fn in layers.items():
            c0, w0 = time.process_time(), time.perf_counter()
            for i in range(steps):
                fn(i)
            times[name].append(((time.process_time() - c0) / steps * 1e6,
                                (time.perf_counter() - w0) / steps * 1e6))
    print(f"the softmax tutorial's training step, {rounds} rounds of {steps} steps per layer "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); us per step")
    print(f"  {'layer':10s} {'CPU min':>8s} {'CPU median':>11s} {'wall min':>9s} "
          f"{'wall median':>12s}")
    out = {}
    for name, ts in times.items():
        cpu, wall = [t[0] for t in ts], [t[1] for t in ts]
        out[name] = {"cpu_min": min(cpu), "cpu_median": statistics.median(cpu),
                     "wall_min": min(wall), "wall_median": statistics.median(wall)}
        print(f"  {name:10s} {min(cpu):8.1f} {statistics.median(cpu):11.1f} {min(wall):9.1f} "
              f"{statistics.median(wall):12.1f}")
    return out


if __name__ == "__main__":
    main()
