#!/usr/bin/env python3
"""Writes the ELF seeds of the elf_manifest fuzz target into corpus/elf_manifest/.

Each seed is the smallest file the section reader takes for a plugin: an ELF64
little-endian x86-64 shared-object header, a section header table and the sections
.shstrtab and .plugboard, nothing else (a few hundred bytes instead of a real plugin's
tens of KiB). Run it again only to change the seeds.
"""
import os
import struct

HELLO = (b'{"name":"hello","version":"1.2.0","provides":["template.execute"],'
         b'"aliases":["greeter"],"schemas":{"template.execute":{"input":{"type":"object"}}},'
         b'"description":"Greets","kind":"executor","abi":1}\0')
DEPLOYER = (b'{"name":"process","version":"1.0.0","deploys":["native"],"priority":10,'
            b'"config":{"memory":{"type":"size","description":"limit"}},'
            b'"kind":"deployer","abi":1}\0')


def elf(section, section_type=1, e_type=3, machine=62, cut=None):
    names = b'\0.shstrtab\0.plugboard\0'
    header_size, entry = 64, 64
    names_at = header_size
    section_at = names_at + len(names)
    table_at = section_at + len(section)
    shdrs = [
        bytes(entry),
        struct.pack('<IIQQQQIIQQ', 1, 3, 0, 0, names_at, len(names), 0, 0, 1, 0),
        struct.pack('<IIQQQQIIQQ', 11, section_type, 0, 0, section_at, len(section), 0, 0, 1, 0),
    ]
    ident = b'\x7fELF' + bytes([2, 1, 1, 0]) + bytes(8)
    header = ident + struct.pack('<HHIQQQIHHHHHH', e_type, machine, 1, 0, 0, table_at, 0,
                                 header_size, 0, 0, entry, len(shdrs), 1)
    data = header + names + section + b''.join(shdrs)
    return data[:cut] if cut else data


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus', 'elf_manifest')
    os.makedirs(out, exist_ok=True)
    seeds = {
        'hello.elf': elf(HELLO),
        'deployer.elf': elf(DEPLOYER),
        'two-manifests.elf': elf(HELLO + DEPLOYER),
        'nobits.elf': elf(HELLO, section_type=8),
        'executable.elf': elf(HELLO, e_type=2),
        'truncated.elf': elf(HELLO, cut=400),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
