"""tf.app.flags: DEFINE_string/integer/float/boolean and FLAGS, parsed by tf.app.run."""

from __future__ import annotations

import argparse


class _Flags:
    def __init__(self):
        self.__dict__["_parser"] = argparse.ArgumentParser(add_help=False)
        self.__dict__["_values"] = {}
        self.__dict__["_defaults"] = {}
        self.__dict__["_bools"] = set()

    def _define(self, name, default, help_, type_):
        if type_ is bool:  # --name, --noname, --name=true/false (absl's forms)
            self._parser.add_argument(f"--{name}", dest=name, action="store_true",
                                      default=default, help=help_)
            self._parser.add_argument(f"--no{name}", dest=name, action="store_false")
            self._bools.add(name)
        else:
            self._parser.add_argument(f"--{name}", default=default, type=type_, help=help_)
        self._defaults[name] = default

    def _parse(self, argv):
        args = []
        for tok in argv[1:]:
            name, eq, value = tok[2:].partition("=")
            if tok.startswith("--") and eq and name in self._bools:
                tok = f"--{name}" if value.lower() in ("1", "true", "yes") else f"--no{name}"
            args.append(tok)
        ns, rest = self._parser.parse_known_args(args)
        self._values.update(vars(ns))
        return argv[:1] + rest

    def __getattr__(self, name):
        if name in self._values:
            return self._values[name]
        if name in self._defaults:
            return self._defaults[name]
        raise AttributeError(f"flag --{name} is not defined")

    def __setattr__(self, name, value):
        self._values[name] = value


FLAGS = _Flags()


def DEFINE_string(name, default, help=None):
    FLAGS._define(name, default, help, str)


def DEFINE_integer(name, default, help=None):
    FLAGS._define(name, default, help, int)


def DEFINE_float(name, default, help=None):
    FLAGS._define(name, default, help, float)


def DEFINE_boolean(name, default, help=None):
    FLAGS._define(name, default, help, bool)


DEFINE_bool = DEFINE_boolean
