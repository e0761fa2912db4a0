"""Bound the pickle inside an uploaded `.pt` file before anything unpickles it.

`torch.load(weights_only=True)` refuses code, but it still builds whatever plain objects the
pickle describes, and PyTorch says it does not protect against denial of service. A pickle can
refer back to an object it built (a memo GET) as often as it likes, so a 1 KB file can describe
a tuple of 2**40 leaves as 40 tuples that each hold the previous one twice. Nothing is large
until something walks it: a dict hashing it as a key (the unpickler itself, in C, holding the
GIL: the whole server froze), or a `repr`, `==` or `str` of it in an error message.

`scan_torch_zip` reads the archive and tokenizes its `data.pkl` with `pickletools.genops`, which
decodes opcodes and builds nothing. It follows the unpickler's stack and memo with small
stand-ins that know each object's kind, its nesting depth and its *unfolded* size (how many
nodes a recursive walk visits, every shared reference counted again), in time linear in the
pickle's size, and refuses, before any object exists:

* anything a `torch.save` of a state_dict or of this page's resume checkpoint never writes:
  other opcodes, other GLOBALs, calls other than OrderedDict() and _rebuild_tensor_v2(...),
  persistent ids other than this archive's tensor storages, dict keys other than str and int;
* anything past the caps below, each far above what the page's own largest files need;
* anything malformed: a stack or mark underflow, a memo slot read before it was written,
  a truncated pickle (the unpickler would raise IndexError, KeyError, AssertionError...).

It is the first gate, not the only one: torch's weights_only unpickler still reads what passes.
This module never imports streamlit.
"""
from __future__ import annotations

import io
import pickletools
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class PickleFacts:
    """What the scan measures of a pickle; also the form of its caps."""

    opcodes: int
    pickle_bytes: int
    memo_slots: int
    memo_reads: int         # memo GETs: shared references, how the bombs multiply
    nesting: int            # containers inside containers
    mark_depth: int         # MARKs open at once (the unpickler's meta stack)
    unfolded: int           # nodes a recursive walk (hash, repr, ==) visits; a tensor counts as one
    longest_string: int     # characters
    largest_tensor: int     # elements


# The page's largest checkpoints: 4 hidden layers of 256, resume files for every optimizer the
# page offers, torch.save of `model.state_dict()` and of the page's own state_dict downloads.
# tests/unit/moons_trainer/test_checkpoints_bombs.py measures them again and fails if they outgrow these.
PAGE_LARGEST = PickleFacts(opcodes=1_347, pickle_bytes=3_337, memo_slots=328, memo_reads=223,
                           nesting=5, mark_depth=6, unfolded=170, longest_string=32,
                           largest_tensor=256 * 256)
# At least ten times the page's largest for every count, five times for the depths (the test
# checks the margins). They bound the work and memory of this scan, of torch's unpickler and of
# anything that later walks what it built: 10,000 nodes unfolded are a millisecond of hashing or
# repr; 32 levels stay far from Python's recursion limit; a tensor may hold as many float32
# elements as the 4 MB upload cap.
CAPS = PickleFacts(opcodes=20_000, pickle_bytes=64 * 1024, memo_slots=5_000, memo_reads=5_000,
                   nesting=32, mark_depth=32, unfolded=10_000, longest_string=1_024,
                   largest_tensor=1 << 20)
MAX_INT_BITS = 64           # every number in a checkpoint fits in an int64
MAX_TENSOR_DIMS = 8
MAX_METADATA_ENTRY_BYTES = 1_024

# What `torch.save` writes for a dict of tensors (and of lists, numbers and strings).
ORDERED_DICT = "collections OrderedDict"
REBUILD_TENSOR = "torch._utils _rebuild_tensor_v2"
STORAGE_ELEMENT_BYTES = {
    "torch FloatStorage": 4, "torch DoubleStorage": 8, "torch HalfStorage": 2,
    "torch BFloat16Storage": 2, "torch LongStorage": 8, "torch IntStorage": 4,
    "torch ShortStorage": 2, "torch CharStorage": 1, "torch ByteStorage": 1, "torch BoolStorage": 1,
}
ALLOWED_GLOBALS = frozenset({ORDERED_DICT, REBUILD_TENSOR, *STORAGE_ELEMENT_BYTES})
# Protocol 2, the protocol torch.save uses (and the only one its weights_only unpickler reads
# without a warning): the opcodes it writes for dicts, lists, tuples, str, int, float, bool, None
# and tensors. No sets (hashing), no DUP, no INST/OBJ/NEWOBJ, no raw bytes.
ALLOWED_OPCODES = frozenset({
    "PROTO", "STOP", "GLOBAL", "REDUCE", "BUILD", "BINPERSID", "MARK",
    "BINPUT", "LONG_BINPUT", "BINGET", "LONG_BINGET",
    "EMPTY_DICT", "SETITEM", "SETITEMS", "EMPTY_LIST", "APPEND", "APPENDS",
    "EMPTY_TUPLE", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3",
    "NONE", "NEWTRUE", "NEWFALSE", "BININT", "BININT1", "BININT2", "LONG1", "BINFLOAT", "BINUNICODE",
})
# The entries of a torch.save archive besides data.pkl and data/<n>: small text files.
METADATA_ENTRIES = frozenset({"version", ".format_version", ".storage_alignment", "byteorder",
                              ".data/version", ".data/serialization_id"})

LIMIT = "The checkpoint's pickle is beyond this page's limits"
FOREIGN = "The file holds more than plain tensors"
DAMAGED = "Not a readable .pt file"
_EXPLAINED = {
    LIMIT: "Before anything is unpickled, the pickle inside the `.pt` file is read opcode by "
           "opcode and measured, without building anything. A pickle can refer back to an "
           "object it already built as often as it likes, so a file of a kilobyte can describe "
           "a structure of billions of items that would freeze the server the moment anything "
           "hashes or prints it. `torch.load(weights_only=True)` does not guard against that. "
           "A checkpoint of this page's model stays far below every limit.",
    FOREIGN: "A `torch.save` of a state_dict (or of this page's resume checkpoint) holds only "
             "dicts, lists, tuples, numbers, strings and tensors. This file's pickle asks for "
             "something else (another function or class, another pickle opcode): possibly code "
             "that would run on this server. It was refused before anything was unpickled.",
    DAMAGED: "`torch.save` writes a zip archive holding one pickle (`data.pkl`) and the tensors' "
             "bytes. This one does not hold together: it is damaged, or was not written by "
             "`torch.save`.",
}


class PickleRefused(Exception):
    """The scan refused the archive: `title` is one of LIMIT, FOREIGN, DAMAGED."""

    def __init__(self, title: str, message: str) -> None:
        super().__init__(message)
        self.title = title
        self.explanation = _EXPLAINED[title]


class _Node:
    """A stand-in for one object the unpickler would build: never the object itself."""

    __slots__ = ("kind", "value", "items", "size", "depth", "shared")

    def __init__(self, kind: str, value: object = None, items: list[_Node] | None = None,
                 size: int = 1, depth: int = 0) -> None:
        self.kind = kind            # str int float bool none global tuple list dict odict storage tensor
        self.value = value          # str and int values (bounded), a GLOBAL's name
        self.items = items          # a tuple's members, for checking a tensor's or storage's arguments
        self.size = size            # nodes a recursive walk visits, shared references counted again
        self.depth = depth          # containers inside containers: 0 for an atom
        self.shared = False         # read back from the memo: from then on it may not change


def _short(text: str, limit: int = 60) -> str:
    """A string from the file for a message: cut, and quoted so it reads as data."""
    text = text if len(text) <= limit else text[:limit] + "…"
    return repr(text)


class _Scanner:
    """The unpickler's stack, marks and memo, with stand-ins; one method call per opcode."""

    def __init__(self, storages: dict[str, int]) -> None:
        self.storages = storages            # the archive's data/<key> entries: key -> bytes
        self.storage_keys: dict[str, int] = {}
        self.stack: list[_Node] = []
        self.marks: list[list[_Node]] = []
        self.memo: list[_Node] = []
        self.memo_reads = 0
        self.deepest_mark = 0
        self.nesting = 0
        self.longest_string = 0
        self.largest_tensor = 0

    # --- the stack ---------------------------------------------------------------------------

    def pop(self, count: int, opcode: str) -> list[_Node]:
        if len(self.stack) < count:
            raise PickleRefused(DAMAGED, f"{opcode} needs {count} item(s) on the unpickler's stack, which "
                                         f"holds {len(self.stack)}")
        items = self.stack[len(self.stack) - count:]
        del self.stack[len(self.stack) - count:]
        return items

    def pop_mark(self, opcode: str) -> list[_Node]:
        if not self.marks:
            raise PickleRefused(DAMAGED, f"{opcode} closes a MARK that was never opened")
        items, self.stack = self.stack, self.marks.pop()
        return items

    def top(self, opcode: str) -> _Node:
        if not self.stack:
            raise PickleRefused(DAMAGED, f"{opcode} needs an item on the unpickler's stack, which is empty")
        return self.stack[-1]

    def bounded(self, node: _Node) -> _Node:
        if node.size > CAPS.unfolded:
            raise PickleRefused(LIMIT, f"an object in the pickle unfolds to more than {CAPS.unfolded:,} "
                                       "items once its shared references are followed (a checkpoint of "
                                       f"this page's model unfolds to at most {PAGE_LARGEST.unfolded})")
        if node.depth > CAPS.nesting:
            raise PickleRefused(LIMIT, f"containers nest more than {CAPS.nesting} deep (a checkpoint of this "
                                       f"page's model nests {PAGE_LARGEST.nesting} deep)")
        self.nesting = max(self.nesting, node.depth)
        return node

    def container(self, kind: str, items: list[_Node]) -> _Node:
        return self.bounded(_Node(kind, items=items if kind == "tuple" else None,
                                  size=1 + sum(item.size for item in items),
                                  depth=1 + max((item.depth for item in items), default=0)))

    def fill(self, target: _Node, kinds: tuple[str, ...], items: list[_Node], opcode: str) -> None:
        """Items added to a list or dict still under construction."""
        if target.kind not in kinds:
            raise PickleRefused(DAMAGED, f"{opcode} cannot add items to a {target.kind}")
        if target.shared:
            # A container read back from the memo and then changed is how a pickle makes a
            # cycle, or grows an object already counted inside another: torch.save never does.
            raise PickleRefused(LIMIT, f"{opcode} changes a container the pickle already refers back to")
        target.size += sum(item.size for item in items)
        target.depth = max(target.depth, 1 + max((item.depth for item in items), default=0))
        self.bounded(target)

    def keys(self, keys: list[_Node], opcode: str) -> None:
        for key in keys:
            if key.kind not in ("str", "int"):
                # A tuple key is hashed by the unpickler in C, leaf by leaf, holding the GIL.
                raise PickleRefused(FOREIGN, f"{opcode} uses a {key.kind} as a dict key; a checkpoint's "
                                             "dicts are keyed by names and numbers only")

    # --- opcodes -----------------------------------------------------------------------------

    def push(self, node: _Node) -> None:
        self.stack.append(node)     # never a cached `self.stack.append`: MARK swaps the list

    def step(self, name: str, arg: object) -> None:
        push = self.push
        if name in ("BININT", "BININT1", "BININT2", "LONG1"):
            assert isinstance(arg, int)
            if arg.bit_length() >= MAX_INT_BITS:
                raise PickleRefused(LIMIT, f"an integer of {arg.bit_length():,} bits; every number in a "
                                           "checkpoint fits in 64 bits")
            push(_Node("int", arg))
        elif name == "BINUNICODE":
            assert isinstance(arg, str)
            if len(arg) > CAPS.longest_string:
                raise PickleRefused(LIMIT, f"a string of {len(arg):,} characters; the limit is "
                                           f"{CAPS.longest_string:,} (this page's longest: "
                                           f"{PAGE_LARGEST.longest_string})")
            self.longest_string = max(self.longest_string, len(arg))
            push(_Node("str", arg))
        elif name == "BINFLOAT":
            push(_Node("float"))
        elif name in ("NEWTRUE", "NEWFALSE"):
            push(_Node("bool", name == "NEWTRUE"))
        elif name == "NONE":
            push(_Node("none"))
        elif name in ("BINPUT", "LONG_BINPUT"):
            if arg != len(self.memo):
                # pickle numbers its memo slots 0, 1, 2...; torch's unpickler would overwrite or skip.
                raise PickleRefused(DAMAGED, f"the pickle writes memo slot {arg} where slot {len(self.memo)} "
                                             "comes next")
            if len(self.memo) >= CAPS.memo_slots:
                raise PickleRefused(LIMIT, f"the pickle keeps more than {CAPS.memo_slots:,} objects in its "
                                           "memo (this page's largest checkpoint keeps "
                                           f"{PAGE_LARGEST.memo_slots})")
            self.memo.append(self.top(name))
        elif name in ("BINGET", "LONG_BINGET"):
            assert isinstance(arg, int)
            if arg >= len(self.memo):
                raise PickleRefused(DAMAGED, f"the pickle reads memo slot {arg}, which it never wrote "
                                             f"({len(self.memo)} slot(s) written so far)")
            self.memo_reads += 1
            if self.memo_reads > CAPS.memo_reads:
                raise PickleRefused(LIMIT, f"the pickle refers back to earlier objects more than "
                                           f"{CAPS.memo_reads:,} times (this page's largest checkpoint: "
                                           f"{PAGE_LARGEST.memo_reads})")
            node = self.memo[arg]
            node.shared = True
            push(node)
        elif name == "MARK":
            self.marks.append(self.stack)
            self.stack = []
            if len(self.marks) > CAPS.mark_depth:
                raise PickleRefused(LIMIT, f"more than {CAPS.mark_depth} MARKs open at once")
            self.deepest_mark = max(self.deepest_mark, len(self.marks))
        elif name == "EMPTY_TUPLE":
            push(self.container("tuple", []))
        elif name == "TUPLE":
            push(self.container("tuple", self.pop_mark(name)))
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            push(self.container("tuple", self.pop(int(name[-1]), name)))
        elif name == "EMPTY_LIST":
            push(self.container("list", []))
        elif name == "EMPTY_DICT":
            push(self.container("dict", []))
        elif name == "APPEND":
            item = self.pop(1, name)
            self.fill(self.top(name), ("list",), item, name)
        elif name == "APPENDS":
            items = self.pop_mark(name)
            self.fill(self.top(name), ("list",), items, name)
        elif name in ("SETITEM", "SETITEMS"):
            items = self.pop(2, name) if name == "SETITEM" else self.pop_mark(name)
            if len(items) % 2:
                raise PickleRefused(DAMAGED, f"{name} pairs keys with values but has {len(items)} items")
            self.keys(items[0::2], name)
            self.fill(self.top(name), ("dict", "odict"), items, name)
        elif name == "BUILD":
            # torch.save of `model.state_dict()`: the OrderedDict's `_metadata` dict.
            (state,) = self.pop(1, name)
            if state.kind != "dict":
                raise PickleRefused(FOREIGN, f"BUILD sets the attributes of an object from a {state.kind}")
            self.fill(self.top(name), ("odict",), [state], name)
        elif name == "GLOBAL":
            assert isinstance(arg, str)
            if arg not in ALLOWED_GLOBALS:
                raise PickleRefused(FOREIGN, f"the pickle imports {_short(arg.replace(' ', '.'), 80)}, "
                                             "which a state_dict never needs")
            push(_Node("global", arg))
        elif name == "REDUCE":
            func, args = self.pop(2, name)
            push(self.call(func, args))
        elif name == "BINPERSID":
            (pid,) = self.pop(1, name)
            push(self.storage(pid))
        else:
            raise PickleRefused(FOREIGN, f"the pickle uses the opcode {name}, which torch.save of a "
                                         "state_dict never writes")

    def call(self, func: _Node, args: _Node) -> _Node:
        if func.kind != "global" or args.kind != "tuple":
            raise PickleRefused(DAMAGED, f"REDUCE calls a {func.kind} with a {args.kind}")
        assert args.items is not None
        if func.value == ORDERED_DICT:
            if args.items:
                raise PickleRefused(FOREIGN, "OrderedDict is called with arguments")
            return self.container("odict", [])
        if func.value == REBUILD_TENSOR:
            return self.tensor(args.items)
        raise PickleRefused(FOREIGN, f"REDUCE calls {_short(str(func.value).replace(' ', '.'))}, which "
                                     "torch.save of a state_dict never calls")

    def tensor(self, items: list[_Node]) -> _Node:
        """_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, backward_hooks)."""
        kinds = [item.kind for item in items]
        if kinds != ["storage", "int", "tuple", "tuple", "bool", "odict"]:
            raise PickleRefused(DAMAGED, "a tensor is rebuilt from (" + ", ".join(kinds[:8]) + "), not from "
                                         "(storage, offset, size, stride, requires_grad, hooks)")
        storage, offset, size, stride, _, hooks = items
        assert size.items is not None and stride.items is not None
        shape = [d.value for d in size.items if d.kind == "int"]
        steps = [s.value for s in stride.items if s.kind == "int"]
        if (len(shape) != len(size.items) or len(steps) != len(stride.items) or len(shape) != len(steps)
                or len(shape) > MAX_TENSOR_DIMS or hooks.size != 1):
            raise PickleRefused(DAMAGED, "a tensor's size and stride are not two tuples of whole numbers of "
                                         f"the same length (at most {MAX_TENSOR_DIMS}), or it has hooks")
        elements = 1
        for d in shape:
            elements *= d
        assert isinstance(offset.value, int)
        if min([offset.value, *shape, *steps], default=0) < 0 or elements > CAPS.largest_tensor:
            raise PickleRefused(LIMIT, f"a tensor has a negative size, stride or offset, or more than "
                                       f"{CAPS.largest_tensor:,} elements")
        extent = offset.value + sum((d - 1) * s for d, s in zip(shape, steps, strict=True)) + 1
        if elements and extent > storage.value:     # type: ignore[operator]
            raise PickleRefused(DAMAGED, f"a tensor reads {extent:,} elements of a storage that holds "
                                         f"{storage.value:,}")
        self.largest_tensor = max(self.largest_tensor, elements)
        return _Node("tensor")

    def storage(self, pid: _Node) -> _Node:
        """('storage', <dtype>Storage, key, location, numel): one of the archive's data/<key>."""
        items = pid.items or []
        kinds = [item.kind for item in items]
        if pid.kind != "tuple" or kinds != ["str", "global", "str", "str", "int"] \
                or items[0].value != "storage" or items[1].value not in STORAGE_ELEMENT_BYTES:
            raise PickleRefused(DAMAGED, "a persistent id is not ('storage', <dtype>Storage, key, device, "
                                         "size), the only kind torch.save writes")
        _, dtype, key, _, numel = (item.value for item in items)
        assert isinstance(key, str) and isinstance(numel, int) and isinstance(dtype, str)
        nbytes = numel * STORAGE_ELEMENT_BYTES[dtype]
        if key not in self.storages:
            raise PickleRefused(DAMAGED, f"a tensor's data {_short(key, 20)} is not in the archive")
        if self.storages[key] != nbytes or numel < 0:
            raise PickleRefused(DAMAGED, f"tensor data {_short(key, 20)} holds {self.storages[key]:,} bytes; "
                                         f"the pickle says {nbytes:,}")
        if key not in self.storage_keys and key != str(len(self.storage_keys)):
            # torch.save numbers storages 0, 1, 2... in order; torch.load relies on it.
            raise PickleRefused(DAMAGED, f"tensor data {_short(key, 20)} comes where "
                                         f"{len(self.storage_keys)} should")
        self.storage_keys[key] = nbytes
        return _Node("storage", numel)

    def result(self) -> _Node:
        if self.marks or len(self.stack) != 1:
            raise PickleRefused(DAMAGED, f"the pickle stops with {len(self.stack)} item(s) on the stack and "
                                         f"{len(self.marks)} MARK(s) open, not one finished object")
        return self.stack[0]


def _opcodes(data: bytes) -> Iterator[tuple[str, object]]:
    """(name, argument) of each opcode; a malformed pickle is a refusal, never an exception."""
    tokens = pickletools.genops(data)
    while True:
        try:
            op, arg, _ = next(tokens)
        except StopIteration:
            return
        except (ValueError, UnicodeDecodeError) as exc:     # truncated, unknown opcode, bad UTF-8
            raise PickleRefused(DAMAGED, f"the pickle cannot be read: {str(exc)[:200]}") from None
        yield op.name, arg


def scan_pickle(data: bytes, storages: dict[str, int]) -> PickleFacts:
    """Measure and check a torch.save pickle without building it; raise PickleRefused."""
    if len(data) > CAPS.pickle_bytes:
        raise PickleRefused(LIMIT, f"the pickle is {len(data):,} bytes; the limit is {CAPS.pickle_bytes:,} "
                                   f"(this page's largest checkpoint has {PAGE_LARGEST.pickle_bytes:,})")
    scanner = _Scanner(storages)
    count = 0
    for count, (name, arg) in enumerate(_opcodes(data), start=1):
        if count > CAPS.opcodes:
            raise PickleRefused(LIMIT, f"the pickle has more than {CAPS.opcodes:,} opcodes (this page's "
                                       f"largest checkpoint has {PAGE_LARGEST.opcodes:,})")
        if name not in ALLOWED_OPCODES:
            raise PickleRefused(FOREIGN, f"the pickle uses the opcode {name}, which torch.save of a "
                                         "state_dict never writes")
        if (name == "PROTO") != (count == 1) or (name == "PROTO" and arg != 2):
            raise PickleRefused(DAMAGED, "the pickle does not start with protocol 2, as torch.save writes it")
        if name == "STOP":
            break
        if name != "PROTO":
            scanner.step(name, arg)
    root = scanner.result()
    if root.kind not in ("dict", "odict"):
        raise PickleRefused(FOREIGN, f"the pickle holds a {root.kind}, not a dict of tensors")
    return PickleFacts(count, len(data), len(scanner.memo), scanner.memo_reads, scanner.nesting,
                       scanner.deepest_mark, root.size, scanner.longest_string, scanner.largest_tensor)


_STORAGE_NAME = re.compile(r"data/(\d{1,9})")


def scan_torch_zip(archive: zipfile.ZipFile) -> PickleFacts:
    """The archive's entries are the ones torch.save writes, and its pickle passes `scan_pickle`."""
    entries = archive.infolist()
    names = [entry.filename for entry in entries]
    if len(set(names)) != len(names):
        # Two entries of one name: this scan and torch's zip reader might not read the same one.
        raise PickleRefused(DAMAGED, "the archive holds two entries of the same name")
    pickles = [name for name in names if name.endswith("/data.pkl") and name.count("/") == 1]
    if len(pickles) != 1:
        raise PickleRefused(DAMAGED, f"the archive holds {len(pickles)} data.pkl file(s), not one")
    prefix = pickles[0].removesuffix("data.pkl")
    storages: dict[str, int] = {}
    for entry in entries:
        name = entry.filename
        inner = name.removeprefix(prefix) if name.startswith(prefix) else None
        number = _STORAGE_NAME.fullmatch(inner or "")
        if number:
            storages[number.group(1)] = entry.file_size
        elif inner not in METADATA_ENTRIES and inner != "data.pkl":
            raise PickleRefused(DAMAGED, f"the archive holds {_short(name)}, which torch.save never writes")
        elif inner != "data.pkl" and entry.file_size > MAX_METADATA_ENTRY_BYTES:
            raise PickleRefused(DAMAGED, f"the archive's {_short(name)} is {entry.file_size:,} bytes; "
                                         "torch.save writes a few")
    with archive.open(pickles[0]) as handle:
        data = handle.read(CAPS.pickle_bytes + 1)
    return scan_pickle(data, storages)


def scan_torch_file(data: bytes) -> PickleFacts:
    """`scan_torch_zip` of a file's bytes (for measuring files, as the tests do)."""
    return scan_torch_zip(zipfile.ZipFile(io.BytesIO(data)))
