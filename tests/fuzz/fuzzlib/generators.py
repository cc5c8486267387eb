"""The program generators by name: "hlo" (gen_hlo.py, written with xlapy's Builder) and
"jax" (gen_jax.py, lowered by JAX)."""

from __future__ import annotations


def generate(name: str, seed: int, programs: int):
    if name == "hlo":
        from fuzzlib import gen_hlo
        return gen_hlo.generate(seed, programs)
    if name == "jax":
        from fuzzlib import gen_jax
        return gen_jax.generate(seed, programs)
    raise ValueError(f"unknown generator '{name}' (hlo or jax)")
