"""tf.app.flags (tf.flags): absl-style DEFINE_string/integer/float/boolean, DEFINE_list,
DEFINE_enum, DEFINE_multi_string, DEFINE_multi_integer, mark_flag_as_required and FLAGS,
parsed by tf.app.run.

As absl's: a list flag takes "a,b,c" (CSV, spaces around items stripped; "" is []); an enum
flag one of its enum_values (case_sensitive=False accepts any case and gives the listed
spelling); a multi flag is repeated (--x=a --x=b) and its value the list of them (the
default, made a list, when it is not given). A value outside an enum, or a required flag
left None, is a flags Error: tf.app.run prints "FATAL Flags parsing error: ..." and exits
with status 1, as absl.app.run.
"""

from __future__ import annotations

import argparse
import csv


class Error(Exception):
    """absl's flags.Error: a flag could not be defined or parsed."""


class IllegalFlagValueError(Error, ValueError):
    """A flag's value is not one it accepts."""


def _parse_list(value):
    if value is None or isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    if not value:
        return []
    return [s.strip() for s in next(csv.reader([value], strict=True))]


class _Flags:
    def __init__(self):
        self.__dict__["_parser"] = argparse.ArgumentParser(add_help=False)
        self.__dict__["_values"] = {}
        self.__dict__["_defaults"] = {}
        self.__dict__["_bools"] = set()
        self.__dict__["_post"] = {}       # name -> function of the parsed value
        self.__dict__["_required"] = set()

    def _define(self, name, default, help_, type_, post=None, action=None):
        if type_ is bool:  # --name, --noname, --name=true/false (absl's forms)
            self._parser.add_argument(f"--{name}", dest=name, action="store_true",
                                      default=default, help=help_)
            self._parser.add_argument(f"--no{name}", dest=name, action="store_false")
            self._bools.add(name)
        elif action is not None:
            self._parser.add_argument(f"--{name}", default=None, type=type_, help=help_,
                                      action=action)
        else:
            self._parser.add_argument(f"--{name}", default=default, type=type_, help=help_)
        if post is not None:
            self._post[name] = post
        self._defaults[name] = default

    def _parse(self, argv):
        args = []
        for tok in argv[1:]:
            name, eq, value = tok[2:].partition("=")
            if tok.startswith("--") and eq and name in self._bools:
                tok = f"--{name}" if value.lower() in ("1", "true", "yes") else f"--no{name}"
            args.append(tok)
        ns, rest = self._parser.parse_known_args(args)
        values = vars(ns)
        for name, post in self._post.items():
            try:
                values[name] = post(values[name])
            except (ValueError, csv.Error) as e:
                raise IllegalFlagValueError(f"flag --{name}={values[name]!r}: {e}") from None
        self._values.update(values)
        for name in sorted(self._required):
            if getattr(self, name) is None:
                raise IllegalFlagValueError(f"flag --{name}=None: Flag --{name} must have a "
                                            "value other than None.")
        return argv[:1] + rest

    def __getattr__(self, name):
        if name in self._values:
            return self._values[name]
        if name in self._defaults:
            return self._defaults[name]
        raise AttributeError(f"flag --{name} is not defined")

    def __setattr__(self, name, value):
        self._values[name] = value

    def __contains__(self, name):
        return name in self._defaults


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


def DEFINE_list(name, default, help=None):
    """A comma-separated list of strings."""
    FLAGS._define(name, _parse_list(default), help, str, post=_parse_list)


def DEFINE_enum(name, default, enum_values, help=None, case_sensitive=True):
    """A string that must be one of enum_values."""
    enum_values = list(enum_values)
    if not enum_values:
        raise ValueError(f"enum_values for flag --{name} cannot be empty")

    def check(value):
        if value is None:
            return None
        if case_sensitive:
            if value in enum_values:
                return value
        else:
            for v in enum_values:
                if v.upper() == str(value).upper():
                    return v
        raise ValueError(f"value should be one of <{'|'.join(enum_values)}>")

    try:
        default = check(default)
    except ValueError as e:
        raise IllegalFlagValueError(f"flag --{name}={default!r}: {e}") from None
    FLAGS._define(name, default, help, str, post=check)


def _multi(name, default, help, kind):
    def as_list(value):
        if value is None:
            return None
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        return [kind(v) for v in items]

    try:
        default = as_list(default)
    except ValueError as e:
        raise IllegalFlagValueError(f"flag --{name}={default!r}: {e}") from None
    FLAGS._define(name, default, help, kind,
                  post=lambda v: list(v) if v is not None else
                  (list(default) if default is not None else None),
                  action="append")


def DEFINE_multi_string(name, default, help=None):
    """A flag given any number of times; its value the list of the strings."""
    _multi(name, default, help, str)


def DEFINE_multi_integer(name, default, help=None):
    """A flag given any number of times; its value the list of the integers."""
    _multi(name, default, help, int)


def mark_flag_as_required(flag_name, flag_values=FLAGS):
    """Parsing (tf.app.run) fails unless the flag ends up other than None."""
    if flag_name not in flag_values:
        raise Error(f"flag --{flag_name} is not defined")
    flag_values._required.add(flag_name)


def mark_flags_as_required(flag_names, flag_values=FLAGS):
    for name in flag_names:
        mark_flag_as_required(name, flag_values)
