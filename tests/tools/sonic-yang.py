#!/usr/bin/env python3
"""sonic-yang.py SOCKET [DB] - a CONFIG_DB read from redis, in SONiC's YANG form

Reads every row of database DB (default 4, CONFIG_DB) of the redis server on
the Unix socket SOCKET with redis-cli, and prints it as the XML document
yanglint validates against SONiC's YANG models: a row "TABLE|K1|K2" becomes
an entry of TABLE_LIST in the module's container, with the keys first; a
field whose name ends in '@' is a leaf-list (comma-separated in redis).
A table this tool does not know is an error, so nothing goes unchecked.
"""
import subprocess
import sys
from xml.sax.saxutils import escape

# table -> (module, key leaves)
TABLES = {
    "PORT": ("sonic-port", ["name"]),
    "MIRROR_SESSION": ("sonic-mirror-session", ["name"]),
    "ACL_TABLE_TYPE": ("sonic-acl", ["ACL_TABLE_TYPE_NAME"]),
    "ACL_TABLE": ("sonic-acl", ["ACL_TABLE_NAME"]),
    "ACL_RULE": ("sonic-acl", ["ACL_TABLE_NAME", "RULE_NAME"]),
    "TUNNEL": ("sonic-tunnel", ["tunnel_name"]),
}


def cli(sock, db, *args):
    out = subprocess.run(["redis-cli", "--raw", "-s", sock, "-n", str(db), *args],
                         check=True, capture_output=True, text=True).stdout
    return out.split("\n")[:-1] if out else []


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: sonic-yang.py SOCKET [DB]")
    sock, db = sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 4
    modules = {}
    for key in sorted(cli(sock, db, "--scan")):
        table, *keys = key.split("|")
        if table not in TABLES:
            sys.exit(f"sonic-yang.py: no YANG form known for table '{table}' (row '{key}')")
        module, names = TABLES[table]
        if len(keys) != len(names):
            sys.exit(f"sonic-yang.py: row '{key}' has {len(keys)} key(s), expected {len(names)}")
        flat = cli(sock, db, "HGETALL", key)
        fields = dict(zip(flat[0::2], flat[1::2]))
        xml = "".join(f"<{n}>{escape(v)}</{n}>" for n, v in zip(names, keys))
        for name, value in fields.items():
            if name.endswith("@"):
                name = name[:-1]
                xml += "".join(f"<{name}>{escape(v)}</{name}>" for v in value.split(",") if v)
            else:
                xml += f"<{name}>{escape(value)}</{name}>"
        modules.setdefault(module, {}).setdefault(table, []).append(xml)
    for module, tables in modules.items():
        print(f'<{module} xmlns="http://github.com/sonic-net/{module}">')
        for table, entries in tables.items():
            print(f"<{table}>" + "".join(f"<{table}_LIST>{e}</{table}_LIST>" for e in entries)
                  + f"</{table}>")
        print(f"</{module}>")


if __name__ == "__main__":
    main()
