"""tf.profiler.ProfileOptionBuilder: builds the option dict of tf.profiler.profile.

    opts = (tf.profiler.ProfileOptionBuilder(
                tf.profiler.ProfileOptionBuilder.float_operation())
            .with_max_depth(3).with_file_output("/tmp/flops.txt").build())

The three pre-built dicts (trainable_variables_parameter, float_operation,
time_and_memory) and the defaults of a plain ProfileOptionBuilder() are TF 1.15's."""

from __future__ import annotations

import copy

TRAINABLE_VARIABLES = "_trainable_variables"  # the op type given to trainable variables


class ProfileOptionBuilder:
    """Builder of profiling options: each with_* method sets options and returns self;
    build() returns the dict."""

    def __init__(self, options=None):
        if options is not None:
            if not isinstance(options, dict):
                raise TypeError(f"ProfileOptionBuilder(options) takes an option dict, got "
                                f"{type(options).__name__}")
            self._options = copy.deepcopy(options)
        else:
            self._options = {"max_depth": 100, "min_bytes": 0, "min_micros": 0,
                             "min_params": 0, "min_float_ops": 0, "min_occurrence": 0,
                             "order_by": "name", "account_type_regexes": [".*"],
                             "start_name_regexes": [".*"], "trim_name_regexes": [],
                             "show_name_regexes": [".*"], "hide_name_regexes": [],
                             "account_displayed_op_only": False, "select": ["micros"],
                             "step": -1, "output": "stdout"}

    @staticmethod
    def _common(**kw) -> dict:
        d = {"max_depth": 10000, "min_bytes": 0, "min_micros": 0, "min_params": 0,
             "min_float_ops": 0, "min_occurrence": 0, "order_by": "name",
             "account_type_regexes": [".*"], "start_name_regexes": [".*"],
             "trim_name_regexes": [], "show_name_regexes": [".*"], "hide_name_regexes": [],
             "account_displayed_op_only": True, "select": [], "step": -1,
             "output": "stdout"}
        d.update(kw)
        return d

    @staticmethod
    def trainable_variables_parameter() -> dict:
        """Options counting the parameters of the trainable variables (for the scope
        view)."""
        return ProfileOptionBuilder._common(account_type_regexes=[TRAINABLE_VARIABLES],
                                            select=["params"])

    @staticmethod
    def float_operation() -> dict:
        """Options counting float operations, ops with at least one shown, most first."""
        return ProfileOptionBuilder._common(min_float_ops=1, order_by="float_ops",
                                            select=["float_ops"])

    @staticmethod
    def time_and_memory(min_micros=1, min_bytes=1, min_accelerator_micros=0,
                        min_cpu_micros=0, min_peak_bytes=0, min_residual_bytes=0,
                        min_output_bytes=0) -> dict:
        """Options showing execution time and memory of the ops that ran (needs a
        RunMetadata of a traced run), slowest first."""
        d = ProfileOptionBuilder._common(order_by="micros", select=["micros", "bytes"])
        d.update(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                 min_residual_bytes=min_residual_bytes, min_output_bytes=min_output_bytes,
                 min_micros=min_micros, min_accelerator_micros=min_accelerator_micros,
                 min_cpu_micros=min_cpu_micros)
        return d

    def build(self) -> dict:
        return copy.deepcopy(self._options)

    def with_max_depth(self, max_depth):
        self._options["max_depth"] = max_depth
        return self

    def with_min_memory(self, min_bytes=0, min_peak_bytes=0, min_residual_bytes=0,
                        min_output_bytes=0):
        self._options.update(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                             min_residual_bytes=min_residual_bytes,
                             min_output_bytes=min_output_bytes)
        return self

    def with_min_execution_time(self, min_micros=0, min_accelerator_micros=0,
                                min_cpu_micros=0):
        self._options.update(min_micros=min_micros,
                             min_accelerator_micros=min_accelerator_micros,
                             min_cpu_micros=min_cpu_micros)
        return self

    def with_min_parameters(self, min_params):
        self._options["min_params"] = min_params
        return self

    def with_min_occurrence(self, min_occurrence):
        self._options["min_occurrence"] = min_occurrence
        return self

    def with_min_float_operations(self, min_float_ops):
        self._options["min_float_ops"] = min_float_ops
        return self

    def with_accounted_types(self, account_type_regexes):
        self._options["account_type_regexes"] = copy.copy(account_type_regexes)
        return self

    def with_node_names(self, start_name_regexes=None, show_name_regexes=None,
                        hide_name_regexes=None, trim_name_regexes=None):
        for key, value in (("start_name_regexes", start_name_regexes),
                           ("show_name_regexes", show_name_regexes),
                           ("hide_name_regexes", hide_name_regexes),
                           ("trim_name_regexes", trim_name_regexes)):
            if value is not None:
                self._options[key] = copy.copy(value)
        return self

    def account_displayed_op_only(self, is_true):
        self._options["account_displayed_op_only"] = is_true
        return self

    def with_empty_output(self):
        self._options["output"] = "none"
        return self

    def with_stdout_output(self):
        self._options["output"] = "stdout"
        return self

    def with_file_output(self, outfile):
        self._options["output"] = f"file:outfile={outfile}"
        return self

    def with_timeline_output(self, timeline_file):
        self._options["output"] = f"timeline:outfile={timeline_file}"
        return self

    def with_pprof_output(self, pprof_file):
        self._options["output"] = f"pprof:outfile={pprof_file}"
        return self

    def order_by(self, attribute):
        self._options["order_by"] = attribute
        return self

    def select(self, attributes):
        self._options["select"] = copy.copy(attributes)
        return self

    def with_step(self, step):
        self._options["step"] = step
        return self
