"""tf.gfile: TensorFlow 1.x's file API over the local file system.

Missing paths raise tf.errors.NotFoundError and existing targets AlreadyExistsError, as
TF's file system layer did; GFile reads and writes text or bytes by its mode.
"""

from __future__ import annotations

import glob as _glob
import os
import shutil
from dataclasses import dataclass

from xlapy.compat.v1.errors import (AlreadyExistsError, FailedPreconditionError,
                                    NotFoundError)


def _path(p) -> str:
    return os.fspath(p.decode() if isinstance(p, bytes) else p)


class GFile:
    """A file: GFile(name, mode='r'), a context manager with read/readline/readlines/write/
    seek/tell/flush/close, size() and iteration over lines."""

    def __init__(self, name, mode="r"):
        self.name = _path(name)
        self.mode = mode
        if "r" in mode and not os.path.exists(self.name):
            raise NotFoundError(f"{self.name}; No such file or directory")
        if "r" in mode and os.path.isdir(self.name):
            raise FailedPreconditionError(f"{self.name}; Is a directory")
        self._f = open(self.name, mode, **({} if "b" in mode else {"encoding": "utf-8"}))

    def size(self) -> int:
        return os.path.getsize(self.name)

    def read(self, n=-1):
        return self._f.read(n)

    def readline(self):
        return self._f.readline()

    def readlines(self):
        return self._f.readlines()

    def write(self, data):
        if "b" in self.mode and isinstance(data, str):
            data = data.encode()
        elif "b" not in self.mode and isinstance(data, bytes):
            data = data.decode()
        self._f.write(data)

    def seek(self, offset=None, whence=0, position=None):
        return self._f.seek(position if position is not None else offset, whence)

    def tell(self):
        return self._f.tell()

    def flush(self):
        self._f.flush()

    def close(self):
        self._f.close()

    def __iter__(self):
        return iter(self._f)

    def __next__(self):
        return next(self._f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


FastGFile = Open = GFile


def Exists(filename) -> bool:
    return os.path.exists(_path(filename))


def IsDirectory(dirname) -> bool:
    return os.path.isdir(_path(dirname))


def MkDir(dirname) -> None:
    d = _path(dirname)
    if os.path.exists(d):
        raise AlreadyExistsError(f"{d}; File exists")
    parent = os.path.dirname(os.path.abspath(d))
    if not os.path.isdir(parent):
        raise NotFoundError(f"{d}; No such file or directory (the parent does not exist)")
    os.mkdir(d)


def MakeDirs(dirname) -> None:
    d = _path(dirname)
    if os.path.isfile(d):
        raise FailedPreconditionError(f"{d}; Not a directory")
    os.makedirs(d, exist_ok=True)


def ListDirectory(dirname) -> list:
    d = _path(dirname)
    if not os.path.isdir(d):
        raise NotFoundError(f"Could not find directory {d}")
    return os.listdir(d)


def Glob(filename) -> list:
    return sorted(_glob.glob(_path(filename)))


def Remove(filename) -> None:
    f = _path(filename)
    if not os.path.lexists(f):
        raise NotFoundError(f"{f}; No such file or directory")
    os.remove(f)


def DeleteRecursively(dirname) -> None:
    d = _path(dirname)
    if not os.path.exists(d):
        raise NotFoundError(f"{d}; No such file or directory")
    if os.path.isdir(d):
        shutil.rmtree(d)
    else:
        os.remove(d)


def Rename(oldname, newname, overwrite=False) -> None:
    old, new = _path(oldname), _path(newname)
    if not os.path.exists(old):
        raise NotFoundError(f"{old}; No such file or directory")
    if os.path.exists(new) and not overwrite:
        raise AlreadyExistsError(f"file already exists: {new}")
    os.replace(old, new)


def Copy(oldpath, newpath, overwrite=False) -> None:
    old, new = _path(oldpath), _path(newpath)
    if not os.path.exists(old):
        raise NotFoundError(f"{old}; No such file or directory")
    if os.path.exists(new) and not overwrite:
        raise AlreadyExistsError(f"file already exists: {new}")
    shutil.copyfile(old, new)


@dataclass
class FileStatistics:
    length: int
    mtime_nsec: int
    is_directory: bool


def Stat(filename) -> FileStatistics:
    f = _path(filename)
    if not os.path.exists(f):
        raise NotFoundError(f"{f}; No such file or directory")
    st = os.stat(f)
    return FileStatistics(st.st_size, st.st_mtime_ns, os.path.isdir(f))


def Walk(top, in_order=True):
    """(dirname, subdirs, files) triples, top-down when in_order."""
    top = _path(top)
    if not os.path.isdir(top):
        return
    yield from os.walk(top, topdown=in_order)


# tf.io.gfile's names (TF 1.13+): the same functions in lower case
exists, isdir, mkdir, makedirs, listdir = Exists, IsDirectory, MkDir, MakeDirs, ListDirectory
glob, remove, rmtree, rename, copy, stat, walk = (Glob, Remove, DeleteRecursively, Rename, Copy,
                                                   Stat, Walk)
