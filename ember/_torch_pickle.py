"""A pickle reader that never calls anything the file names: it interprets the binary pickle opcodes itself and
hands globals, REDUCE, BUILD and persistent ids to a policy object, which decides what each may become.

Unlike ``pickle.Unpickler`` with a restricted ``find_class``, nothing here reaches code the file chooses (no
``__reduce__``, ``__setstate__``, ``__new__`` or copyreg extension), the memo is a dict (an index of 2**32 costs
nothing), and tuples nest at most :data:`MAX_TUPLE_DEPTH` deep (hashing a deeper one recurses in C and can
overflow the interpreter's stack).
"""
import pickle
import pickletools
import struct
from collections import Counter, OrderedDict

MAX_TUPLE_DEPTH = 1000
_MAX_NAME = 1024  # bytes in a GLOBAL line: module and qualified names are far shorter
_MODULE_RENAMES = {"__builtin__": "builtins", "copy_reg": "copyreg"}  # Python 2 names that protocol 2 writes
_DICTS = (dict, OrderedDict, Counter)

# opcodes that build arbitrary objects or need state outside the file: refused by name rather than as unknown
_REFUSED = {"INST": "it instantiates an arbitrary class", "OBJ": "it instantiates an arbitrary class",
            "NEWOBJ": "it instantiates an arbitrary class", "NEWOBJ_EX": "it instantiates an arbitrary class",
            "EXT1": "it reads the copyreg extension registry", "EXT2": "it reads the copyreg extension registry",
            "EXT4": "it reads the copyreg extension registry",
            "PERSID": "persistent ids must be binary tuples (BINPERSID)",
            "NEXT_BUFFER": "it needs out-of-band buffers", "READONLY_BUFFER": "it needs out-of-band buffers"}


class UnpicklingError(pickle.UnpicklingError, ValueError):
    """A file that cannot be loaded: malformed, or asking for an object that is not a tensor, a storage or plain
    data. Both a ``pickle.UnpicklingError`` and a ``ValueError``."""


class DataOnly:
    """The policy that allows no globals, calls, BUILDs or persistent ids: plain data only. ``encoding`` decodes
    Python 2 strings ('bytes' keeps them as bytes)."""

    def __init__(self, name, encoding="utf-8"):
        self.name, self.encoding = name, encoding

    def error(self, msg):
        return UnpicklingError(f"{self.name}: {msg}")

    def find_global(self, module, qualname):
        raise self.error(f"unexpected global {module}.{qualname} in a pickle that holds plain data only")

    def reduce(self, func, args):
        raise self.error("unexpected REDUCE in a pickle that holds plain data only")

    def build(self, inst, state):
        raise self.error("unexpected BUILD in a pickle that holds plain data only")

    def persistent_load(self, pid):
        raise self.error("unexpected persistent id in a pickle that holds plain data only")


class Unpickler:
    """Reads one pickle from ``buf`` (bytes or a memoryview) at ``pos``; ``load()`` returns (object, end)."""

    def __init__(self, buf, policy):
        self.buf, self.policy = buf, policy

    def error(self, msg):
        return self.policy.error(msg)

    def load(self, pos=0):
        """The unpickled object and the position just after its STOP opcode."""
        self.pos = pos
        self.stack, self.metastack, self.memo = [], [], {}
        self._depth, self._deep = {}, []  # nesting depth of tuples holding tuples (kept alive: ids stay unique)
        buf, n, dispatch = self.buf, len(self.buf), _DISPATCH
        start, op = pos, None
        try:
            while True:
                start = self.pos
                if start >= n:
                    raise self.error(f"pickle data truncated at byte {n} (no STOP opcode)")
                op = buf[start]
                self.pos = start + 1
                handler = dispatch.get(op)
                if handler is None:
                    raise self._refuse(op, start)
                if handler(self):
                    return self.stack.pop(), self.pos
        except UnpicklingError:
            raise
        except IndexError:
            raise self.error(f"malformed pickle: {_op_name(op)} at byte {start} found too few items on the stack "
                             "(or no MARK)") from None
        except KeyError as e:
            raise self.error(f"malformed pickle: {_op_name(op)} at byte {start} reads memo entry {e} that was "
                             "never stored") from None
        except (ValueError, TypeError, OverflowError, MemoryError, RecursionError, struct.error) as e:
            raise self.error(f"malformed pickle: {_op_name(op)} at byte {start}: {type(e).__name__}: {e}") from None

    def _refuse(self, op, start):
        name = _op_name(op)
        why = _REFUSED.get(name)
        if why is not None:
            return self.error(f"pickle opcode {name} at byte {start} is not allowed: {why}")
        return self.error(f"unsupported pickle opcode {name} at byte {start}")

    # -- reading arguments --------------------------------------------------------------------------------------------
    def _take(self, size):
        p = self.pos
        if size < 0 or size > len(self.buf) - p:
            raise self.error(f"pickle data truncated: {size} bytes wanted at byte {p}, "
                             f"{len(self.buf) - p} remain")
        self.pos = p + size
        return self.buf[p:p + size]

    def _int(self, fmt, size):
        return struct.unpack(fmt, self._take(size))[0]

    def _line(self):
        p = self.pos
        chunk = bytes(self.buf[p:p + _MAX_NAME])
        i = chunk.find(b"\n")
        if i < 0:
            if len(chunk) < _MAX_NAME:
                raise self.error(f"pickle data truncated in a GLOBAL name at byte {p}")
            raise self.error(f"GLOBAL name at byte {p}: no newline within {_MAX_NAME} bytes")
        self.pos = p + i + 1
        return chunk[:i].decode("utf-8")

    def _pop_mark(self):
        if not self.metastack:
            raise IndexError
        items, self.stack = self.stack, self.metastack.pop()
        return items

    def _tuple(self, items):
        t = tuple(items)
        depth = 1
        for x in t:
            if type(x) is tuple:
                depth = max(depth, self._depth.get(id(x), 1) + 1)
        if depth > 1:
            if depth > MAX_TUPLE_DEPTH:
                raise self.error(f"tuples nested more than {MAX_TUPLE_DEPTH} deep")
            self._depth[id(t)] = depth
            self._deep.append(t)
        self.stack.append(t)

    def _global_named(self, module, qualname):
        module = _MODULE_RENAMES.get(module, module)
        self.stack.append(self.policy.find_global(module, qualname))

    # -- opcodes -----------------------------------------------------------------------------------------------------
    def _proto(self):
        version = self._take(1)[0]
        if version > pickle.HIGHEST_PROTOCOL:
            raise self.error(f"unsupported pickle protocol {version}")

    def _frame(self):
        self._take(8)  # a length hint for buffered readers; the data follows inline

    def _stop(self):
        return True

    def _mark(self):
        self.metastack.append(self.stack)
        self.stack = []

    def _pop(self):
        self.stack.pop()

    def _pop_mark_op(self):
        self._pop_mark()

    def _dup(self):
        self.stack.append(self.stack[-1])

    def _none(self):
        self.stack.append(None)

    def _true(self):
        self.stack.append(True)

    def _false(self):
        self.stack.append(False)

    def _binint(self):
        self.stack.append(self._int("<i", 4))

    def _binint1(self):
        self.stack.append(self._take(1)[0])

    def _binint2(self):
        self.stack.append(self._int("<H", 2))

    def _long1(self):
        self.stack.append(int.from_bytes(self._take(self._take(1)[0]), "little", signed=True))

    def _long4(self):
        self.stack.append(int.from_bytes(self._take(self._int("<i", 4)), "little", signed=True))

    def _binfloat(self):
        self.stack.append(self._int(">d", 8))

    def _unicode(self, size):
        self.stack.append(str(self._take(size), "utf-8", "surrogatepass"))

    def _binunicode(self):
        self._unicode(self._int("<I", 4))

    def _short_binunicode(self):
        self._unicode(self._take(1)[0])

    def _binunicode8(self):
        self._unicode(self._int("<Q", 8))

    def _binbytes(self):
        self.stack.append(bytes(self._take(self._int("<I", 4))))

    def _short_binbytes(self):
        self.stack.append(bytes(self._take(self._take(1)[0])))

    def _binbytes8(self):
        self.stack.append(bytes(self._take(self._int("<Q", 8))))

    def _bytearray8(self):
        self.stack.append(bytearray(self._take(self._int("<Q", 8))))

    def _binstring(self):  # Python 2 str, decoded with the policy's encoding (bytes kept as they are for 'bytes')
        self._string(self._int("<i", 4))

    def _short_binstring(self):
        self._string(self._take(1)[0])

    def _string(self, size):
        data, encoding = bytes(self._take(size)), self.policy.encoding
        self.stack.append(data if encoding == "bytes" else data.decode(encoding))

    def _empty_tuple(self):
        self.stack.append(())

    def _tuple_op(self):
        self._tuple(self._pop_mark())

    def _tuple1(self):
        self._tuple([self.stack.pop()])

    def _tuple2(self):
        b, a = self.stack.pop(), self.stack.pop()
        self._tuple([a, b])

    def _tuple3(self):
        c, b, a = self.stack.pop(), self.stack.pop(), self.stack.pop()
        self._tuple([a, b, c])

    def _empty_list(self):
        self.stack.append([])

    def _empty_dict(self):
        self.stack.append({})

    def _empty_set(self):
        self.stack.append(set())

    def _target(self, kinds, opname):
        target = self.stack[-1]
        if type(target) not in kinds:
            raise self.error(f"{opname} on a {type(target).__name__} is not allowed")
        return target

    def _append(self):
        item = self.stack.pop()
        self._target((list,), "APPEND").append(item)

    def _appends(self):
        items = self._pop_mark()
        self._target((list,), "APPENDS").extend(items)

    def _setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        self._target(_DICTS, "SETITEM")[key] = value

    def _setitems(self):
        items = self._pop_mark()
        if len(items) % 2:
            raise self.error("SETITEMS with an odd number of items")
        d = self._target(_DICTS, "SETITEMS")
        for i in range(0, len(items), 2):
            d[items[i]] = items[i + 1]

    def _additems(self):
        items = self._pop_mark()
        self._target((set,), "ADDITEMS").update(items)

    def _put(self, index):
        self.memo[index] = self.stack[-1]

    def _binput(self):
        self._put(self._take(1)[0])

    def _long_binput(self):
        self._put(self._int("<I", 4))

    def _memoize(self):
        self._put(len(self.memo))

    def _binget(self):
        self.stack.append(self.memo[self._take(1)[0]])

    def _long_binget(self):
        self.stack.append(self.memo[self._int("<I", 4)])

    def _global(self):
        module = self._line()
        self._global_named(module, self._line())

    def _stack_global(self):
        qualname, module = self.stack.pop(), self.stack.pop()
        if type(module) is not str or type(qualname) is not str:
            raise self.error("STACK_GLOBAL needs two strings")
        self._global_named(module, qualname)

    def _reduce(self):
        args = self.stack.pop()
        self.stack[-1] = self.policy.reduce(self.stack[-1], args)

    def _build(self):
        state = self.stack.pop()
        self.stack[-1] = self.policy.build(self.stack[-1], state)

    def _binpersid(self):
        self.stack.append(self.policy.persistent_load(self.stack.pop()))


def _op_name(op):
    if op is None:
        return "start"
    info = pickletools.code2op.get(chr(op))
    return info.name if info is not None else f"byte {op:#04x}"


_DISPATCH = {code[0]: method for code, method in (
    (pickle.PROTO, Unpickler._proto), (pickle.FRAME, Unpickler._frame), (pickle.STOP, Unpickler._stop),
    (pickle.MARK, Unpickler._mark), (pickle.POP, Unpickler._pop), (pickle.POP_MARK, Unpickler._pop_mark_op),
    (pickle.DUP, Unpickler._dup), (pickle.NONE, Unpickler._none), (pickle.NEWTRUE, Unpickler._true),
    (pickle.NEWFALSE, Unpickler._false), (pickle.BININT, Unpickler._binint), (pickle.BININT1, Unpickler._binint1),
    (pickle.BININT2, Unpickler._binint2), (pickle.LONG1, Unpickler._long1), (pickle.LONG4, Unpickler._long4),
    (pickle.BINFLOAT, Unpickler._binfloat), (pickle.BINUNICODE, Unpickler._binunicode),
    (pickle.SHORT_BINUNICODE, Unpickler._short_binunicode), (pickle.BINUNICODE8, Unpickler._binunicode8),
    (pickle.BINBYTES, Unpickler._binbytes), (pickle.SHORT_BINBYTES, Unpickler._short_binbytes),
    (pickle.BINBYTES8, Unpickler._binbytes8), (pickle.BYTEARRAY8, Unpickler._bytearray8),
    (pickle.BINSTRING, Unpickler._binstring), (pickle.SHORT_BINSTRING, Unpickler._short_binstring),
    (pickle.EMPTY_TUPLE, Unpickler._empty_tuple), (pickle.TUPLE, Unpickler._tuple_op),
    (pickle.TUPLE1, Unpickler._tuple1), (pickle.TUPLE2, Unpickler._tuple2), (pickle.TUPLE3, Unpickler._tuple3),
    (pickle.EMPTY_LIST, Unpickler._empty_list), (pickle.APPEND, Unpickler._append),
    (pickle.APPENDS, Unpickler._appends), (pickle.EMPTY_DICT, Unpickler._empty_dict),
    (pickle.SETITEM, Unpickler._setitem), (pickle.SETITEMS, Unpickler._setitems),
    (pickle.EMPTY_SET, Unpickler._empty_set), (pickle.ADDITEMS, Unpickler._additems),
    (pickle.BINPUT, Unpickler._binput), (pickle.LONG_BINPUT, Unpickler._long_binput),
    (pickle.MEMOIZE, Unpickler._memoize), (pickle.BINGET, Unpickler._binget),
    (pickle.LONG_BINGET, Unpickler._long_binget), (pickle.GLOBAL, Unpickler._global),
    (pickle.STACK_GLOBAL, Unpickler._stack_global), (pickle.REDUCE, Unpickler._reduce),
    (pickle.BUILD, Unpickler._build), (pickle.BINPERSID, Unpickler._binpersid),
)}
