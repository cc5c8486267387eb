"""xlapy.example_libraries: jax.example_libraries' stax (neural-network layers as
(init_fun, apply_fun) pairs) and optimizers ((init, update, get_params) triples), with
JAX's API and JAX's numbers: the same parameters for the same key, the same updates."""
