"""Reading the ELF objects xlapy makes (64-bit, little-endian: x86-64 and AArch64): their
sections, sizes and symbols, with no binutils of the target machine at hand. The JIT's
loader checks the symbols an object needs (runtime/loader.py); ahead-of-time compilation
reports sizes and checks what an object links against (xlapy/aot).

  is_elf64(data)        whether read() takes it
  info = read(obj_bytes)
  info.sizes()          {"text": ..., "rodata": ..., "data": ..., "bss": ...} in bytes
  info.undefined()      names the object needs from elsewhere at link time
  info.undefined(weak=False)  the same without weak references (which may stay null)
  info.defined()        global and weak names it defines for other objects
  info.functions()      {name: size} of the functions it defines (local ones too)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from xlapy.errors import XlapyError

_SHT_PROGBITS, _SHT_SYMTAB, _SHT_NOBITS = 1, 2, 8
_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR = 1, 2, 4
_STT_FUNC = 2
_STB_GLOBAL, _STB_WEAK = 1, 2
MACHINES = {62: "x86_64", 183: "aarch64"}


@dataclass
class Section:
    name: str
    type: int
    flags: int
    size: int

    @property
    def kind(self) -> str | None:
        """text | rodata | data | bss, or None for what is not loaded (symbols, debug)."""
        if not self.flags & _SHF_ALLOC:
            return None
        if self.type == _SHT_NOBITS:
            return "bss"
        if self.flags & _SHF_EXECINSTR:
            return "text"
        return "data" if self.flags & _SHF_WRITE else "rodata"


@dataclass
class Symbol:
    name: str
    kind: int      # STT_*
    binding: int   # STB_*: 0 local, 1 global, 2 weak
    section: int   # 0: undefined
    size: int


@dataclass
class ElfInfo:
    machine: str
    sections: list = field(default_factory=list)
    symbols: list = field(default_factory=list)

    def sizes(self) -> dict:
        out = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
        for s in self.sections:
            if s.kind is not None:
                out[s.kind] += s.size
        return out

    def undefined(self, weak: bool = True) -> list[str]:
        return sorted({s.name for s in self.symbols if s.section == 0 and s.name
                       and (weak or s.binding != _STB_WEAK)})

    def defined(self) -> set[str]:
        return {s.name for s in self.symbols if s.section and s.name
                and s.binding in (_STB_GLOBAL, _STB_WEAK)}

    def functions(self) -> dict:
        return {s.name: s.size for s in self.symbols if s.kind == _STT_FUNC and s.section}


def is_elf64(data: bytes) -> bool:
    return data[:4] == b"\x7fELF" and data[4:6] == b"\x02\x01"


def read(data: bytes) -> ElfInfo:
    if not is_elf64(data):
        raise XlapyError("not a 64-bit little-endian ELF object")
    machine = struct.unpack_from("<H", data, 18)[0]
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    raw = []
    for k in range(shnum):
        name, typ, flags, _addr, off, size, link, _info, _align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + k * shentsize)
        raw.append((name, typ, flags, off, size, link, entsize))

    def string(table: int, at: int) -> str:
        off = raw[table][3] + at
        return data[off:data.index(b"\0", off)].decode()

    info = ElfInfo(MACHINES.get(machine, str(machine)))
    for name, typ, flags, _off, size, _link, _ent in raw:
        info.sections.append(Section(string(shstrndx, name), typ, flags, size))
    for _name, typ, _flags, off, size, link, ent in raw:
        if typ != _SHT_SYMTAB:
            continue
        for k in range(1, size // ent):
            st_name, st_info, _other, shndx, _value, st_size = struct.unpack_from(
                "<IBBHQQ", data, off + k * ent)
            info.symbols.append(Symbol(string(link, st_name), st_info & 0xF, st_info >> 4,
                                       shndx, st_size))
    return info
