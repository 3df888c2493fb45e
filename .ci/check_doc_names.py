#!/usr/bin/env python3
"""Every Rust path a document names in backticks (`send::goes_inline`, `Plugin::message_rules`,
`cut::Spread::chunk_for`, `tcpx::memory::tests::...`) still names something in the code, where the
path says it is. A path starts at any module of that name (a file or folder under src/ or tests/,
or an inline `mod`), or at a type; then each part must be, inside a module, a module or an item
defined in it (fn, struct, enum, trait, const, static, type, mod, macro, field, variant), and
after a type, a function, constant, field or variant in a file that defines or implements it.
So a function renamed or moved fails CI instead of leaving the docs pointing nowhere.

Paths into other crates (std::, libc::, clippy::, ...) are not checked. Usage:
  python3 .ci/check_doc_names.py README.md docs/*.md ncclTests/README.md
"""
import collections
import os
import re
import sys

ROOTS = ("src", "tests")
EXTERNAL = {"std", "core", "alloc", "libc", "clippy", "cudarc", "libloading", "once_cell", "log",
            "env_logger", "cbindgen", "torch", "nccl"}
ITEM = re.compile(r"\b(?:fn|struct|enum|trait|const|static|type|mod|union|macro_rules!)\s+([A-Za-z_]\w*)")
TYPE = re.compile(r"\b(?:struct|enum|trait|type|union)\s+([A-Za-z_]\w*)")
INLINE_MOD = re.compile(r"^\s*(?:pub(?:\([\w ]+\))?\s+)?mod\s+([A-Za-z_]\w*)\s*\{")
IMPL = re.compile(r"^\s*impl\b(?:<[^>]*>)?\s+(?:[\w:<>, ]+\s+for\s+)?(?:\w+::)*([A-Za-z_]\w*)")
FIELD = re.compile(r"^\s*(?:pub(?:\([\w ]+\))?\s+)?([a-z_]\w*)\s*:\s*[^:]")
VARIANT = re.compile(r"^\s+([A-Z]\w*)\s*(?:[,({=]|$)")
USE = re.compile(r"^\s*pub(?:\([\w ]+\))?\s+use\s+([\w:*]+?)(?:::\{([^}]*)\})?\s*;")
PATH = re.compile(r"`((?:[A-Za-z_]\w*::)+[A-Za-z_]\w*)(?:\(\))?`")


class Code:
    """Modules by path (a tuple of names), the names defined in each, and the files that define or
    implement each type."""

    def __init__(self, repo):
        self.items = collections.defaultdict(set)      # module path -> names defined in it
        self.children = collections.defaultdict(set)   # module path -> its modules' names
        self.by_name = collections.defaultdict(set)    # module name -> module paths
        self.type_items = collections.defaultdict(set)  # type name -> names in files defining/implementing it
        self.globs = []                                 # (module path, child name) of each `pub use child::*`
        file_items = {}
        type_files = collections.defaultdict(set)
        for root in ROOTS:
            for folder, dirs, files in os.walk(os.path.join(repo, root)):
                dirs[:] = sorted(d for d in dirs if d != "target")
                for f in sorted(files):
                    if f.endswith(".rs"):
                        path = os.path.join(folder, f)
                        file_items[path] = self._read(repo, path, type_files)
        # `pub use child::*`: the child's names are the module's too (after every file is read).
        for module, child in self.globs:
            for p in self.by_name.get(child, ()):
                if p[:-1] == module:
                    self.items[module] |= self.items[p]
        for t, files in type_files.items():
            for f in files:
                self.type_items[t] |= file_items[f]

    def _module(self, path):
        for upper, name in zip((path[:i] for i in range(len(path))), path):
            self.children[upper].add(name)
            self.by_name[name].add(upper + (name,))

    def _read(self, repo, path, type_files):
        rel = os.path.relpath(path, repo)[:-3].split(os.sep)
        module = tuple(rel[1:] if rel[0] == "src" else rel)
        if module and module[-1] in ("mod", "lib", "main"):
            module = module[:-1]
        self._module(module)
        names = set()
        scopes = [module]
        with open(path, encoding="utf-8") as src:
            for line in src:
                m = INLINE_MOD.match(line)
                if m:
                    inner = module + (m.group(1),)
                    self._module(inner)
                    scopes = [module, inner]   # later lines: the inline module's (tests, mostly)
                found = set(ITEM.findall(line))
                for t in TYPE.findall(line):
                    type_files[t].add(path)
                m = IMPL.match(line)
                if m:
                    type_files[m.group(1)].add(path)
                m = USE.match(line)
                if m:
                    found |= self._reexported(module, m.group(1), m.group(2))
                for rx in (FIELD, VARIANT):
                    m = rx.match(line)
                    if m:
                        found.add(m.group(1))
                for s in scopes:
                    self.items[s] |= found
                names |= found
        return names

    def _reexported(self, module, path, braces):
        """The names a `pub use path;` or `pub use path::{a, b as c, d::*}` brings into `module`."""
        names = set()
        if braces is None:
            *_, last = path.split("::")
            if last == "*":
                self.globs.append((module, path.split("::")[-2]))
            else:
                names.add(last)
            return names
        for entry in braces.split(","):
            entry = entry.strip()
            if not entry or entry == "self":
                continue
            if " as " in entry:
                names.add(entry.split(" as ")[1].strip())
            elif entry.endswith("::*"):
                self.globs.append((module, entry[:-3].split("::")[-1]))
            else:
                names.add(entry.split("::")[-1])
        return names

    def resolves(self, parts):
        """None when the path resolves, else the first part that does not."""
        head, rest = parts[0], parts[1:]
        scopes = {("mod", p) for p in self.by_name.get(head, ())}
        if head == "crate":
            scopes.add(("mod", ()))
        if head in self.type_items:
            scopes.add(("type", head))
        if not scopes:
            return head
        for part in rest:
            nxt = set()
            for kind, where in scopes:
                if kind == "mod":
                    if part in self.children[where]:
                        nxt.add(("mod", where + (part,)))
                    if part in self.items[where]:
                        nxt.add(("item", part))
                        if part in self.type_items:
                            nxt.add(("type", part))
                elif kind == "type" and part in self.type_items[where]:
                    nxt.add(("item", part))
            if not nxt:
                return part
            scopes = nxt
        return None


def main(argv):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = Code(repo)
    bad = 0
    for doc in argv[1:]:
        with open(doc, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                for path in PATH.findall(line):
                    parts = path.split("::")
                    if parts[0] in EXTERNAL:
                        continue
                    miss = code.resolves(parts)
                    if miss:
                        print(f"{doc}:{n}: `{path}`: no `{miss}` where the path puts it")
                        bad += 1
    print(f"{len(argv) - 1} documents checked; {bad} code paths point nowhere")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
