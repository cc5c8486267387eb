"""The tracing frontend: primitives, jit, autodiff."""
