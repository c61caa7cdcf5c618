"""Python arguments -> the core's request (a sweep or plan file's JSON), and the core's errors ->
messages that name the Python keyword.

Values: Python and NumPy scalars (numpy.int64, numpy.float32, numpy.bool_, 0-d arrays) are
taken for their value; a list, tuple or 1-d array where a list is taken; os.PathLike where a path
is taken. Refused, naming the keyword: a value of the wrong type (TypeError), a list where one
value is taken (TypeError), a plain string where a list is required (TypeError: a string is not
split into its characters, nor at commas), NaN or infinity (ringsim.InputError, a ValueError).
"""
import json
import math
import numbers
import os

import numpy

from . import _core

InputError = _core.InputError

INT, NUMBER, TEXT, BOOL, ZERO, MESH, ANY = ("an integer", "a number", "a string", "True or False",
                                            "a ZeRO stage (0-3 or a name)", "a mesh (mp, sp) or 'MPxSP'", "a value")

# The kind of each field of the sweep and plan files (docs/planning.md) and of the functions'
# own parameters; a field not listed passes as any JSON value (the core names it if unknown).
KINDS = {
    "n_seq": INT, "batch": INT, "dp": INT, "mp": INT, "sp": INT, "cached_tokens": INT, "kv_buffers": INT,
    "pp": INT, "micro_batches": INT, "pp_schedule": TEXT, "global_batch": INT,
    "devices": INT, "top": INT, "max_context": INT, "threads": INT,
    "headroom_gib": NUMBER, "target_tokens_per_s": NUMBER, "max_rows": NUMBER, "max_events": NUMBER,
    "hardware": TEXT, "model": TEXT, "impl": TEXT, "cp": TEXT, "layout": TEXT, "mask": TEXT, "tile": TEXT,
    "topology": TEXT, "recompute": TEXT, "profile": TEXT, "engine": TEXT, "precision": TEXT, "phase": TEXT,
    "goal": TEXT, "sync": TEXT, "granularity": TEXT, "trace": TEXT, "weights": TEXT, "kv_cache": TEXT,
    "intervals": BOOL, "sequence_parallel": BOOL, "offload_optimizer": BOOL, "include_research": BOOL,
    "per_implementation": BOOL, "fold": BOOL,
    "zero": ZERO, "mesh": MESH,
}
# The sweep file's axes: a value or a list of values. Its other fields take one value.
SWEEP_AXES = {"phase", "hardware", "model", "impl", "cp", "mesh", "mp", "sp", "dp", "pp", "pp_schedule", "n_seq",
              "cached_tokens", "batch", "micro_batches", "layout", "mask", "tile", "topology", "zero", "recompute"}
# The plan file's searched axes (a value or a list); mp is a list of degrees.
PLAN_AXES = {"impl", "cp", "layout", "tile", "topology", "zero", "recompute"}

ONE, MANY, LIST = "one", "many", "list"  # one value; a value or a list; a list only


def error(kind, function, label, reason):
    """An exception of `kind` whose message names the function and the keyword (label)."""
    e = kind("ringsim.%s: %s: %s" % (function, label, reason))
    e.keyword = label
    e.reason = reason
    return e


def _kind_name(value):
    if isinstance(value, str):
        return "the string %r" % (value[:80],)
    return "a %s" % type(value).__name__


def scalar(function, label, value, kind):
    """One value as JSON takes it: NumPy scalars by their value, paths as strings."""
    if isinstance(value, numpy.ndarray):
        if value.ndim != 0:
            raise error(TypeError, function, label, "expected %s, got a %d-d array" % (kind, value.ndim))
        value = value.item()
    if isinstance(value, numpy.generic):
        value = value.item()
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bool):
        if kind in (BOOL, ANY):
            return value
    elif isinstance(value, numbers.Integral):
        if kind in (INT, NUMBER, ZERO, ANY):
            return int(value)
    elif isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise error(InputError, function, label, "expected a finite number, got %r" % f)
        if kind in (INT, ZERO) and f.is_integer():
            return int(f)
        if kind in (NUMBER, ANY):
            return f
    elif isinstance(value, str):
        if kind in (TEXT, ZERO, MESH, ANY):
            return value
    raise error(TypeError, function, label, "expected %s, got %s" % (kind, _kind_name(value)))


def _sequence(value):
    """A list of the items of a list, tuple or 1-d array; None for anything else."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, numpy.ndarray) and value.ndim == 1:
        return list(value)
    return None


def _pair(value):
    """'MPxSP' from a pair of integers (a tuple, list or array of two), else None."""
    items = _sequence(value)
    if items is None or len(items) != 2:
        return None
    if not all(isinstance(x, (numbers.Integral, numpy.integer)) and not isinstance(x, (bool, numpy.bool_))
               for x in items):
        return None
    return "%dx%d" % (int(items[0]), int(items[1]))


def indexed(label, i):
    """keyword 'layouts' -> keyword 'layouts[1]' (the item of a list)."""
    return label[:-1] + "[%s]'" % i if label.endswith("'") else "%s[%s]" % (label, i)


def convert(function, label, value, kind, many):
    """A keyword's value: one value, or (many) a value or a list, or (list) a list only."""
    if kind == MESH and _pair(value) is not None:
        return _pair(value)
    if isinstance(value, numpy.ndarray) and value.ndim > 1:
        raise error(TypeError, function, label, "expected a list, got a %d-d array" % value.ndim)
    items = _sequence(value)
    if items is None:
        if many == LIST:
            hint = " (a string is not split: give a list, e.g. [%r])" % value if isinstance(value, str) else ""
            raise error(TypeError, function, label, "expected a list, got %s%s" % (_kind_name(value), hint))
        return scalar(function, label, value, kind)
    if many == ONE:
        raise error(TypeError, function, label,
                    "expected one value (this function takes one scenario), got a list of %d" % len(items))
    out = []
    for i, item in enumerate(items):
        at = indexed(label, i)
        if kind == MESH and _pair(item) is not None:
            out.append(_pair(item))
        elif _sequence(item) is not None or (isinstance(item, numpy.ndarray) and item.ndim > 0):
            raise error(TypeError, function, at, "expected %s, got a nested list" % kind)
        else:
            out.append(scalar(function, at, item, kind))
    return out


def keyword(name):
    return "keyword '%s'" % name


def request(function, fields, many, labels=None, from_file=()):
    """The request's JSON: fields (request field -> value; None leaves it at its default), each
    converted by its kind; many(field) says whether it takes a list; labels(field) names it. A
    field read from a file (from_file) is the file's mistake, not a Python type: InputError."""
    out = {}
    for field, value in fields.items():
        if value is None:
            continue
        label = labels(field) if labels else keyword(field)
        try:
            out[field] = convert(function, label, value, KINDS.get(field, ANY), many(field))
        except TypeError as e:
            if field not in from_file:
                raise
            raise error(InputError, function, e.keyword, e.reason) from None
    return json.dumps(out, allow_nan=False)


def sweep_many(field):
    return MANY if field in SWEEP_AXES else ONE


def plan_many(field):
    if field in ("mp", "pp"):
        return LIST
    return MANY if field in PLAN_AXES else ONE


def one(function, name, value, kind):
    """A parameter of one value (threads, max_rows, sync, ...)."""
    return convert(function, keyword(name), value, kind, ONE)


def call(function, labels, fn, *args):
    """fn(*args); a ringsim.InputError from the core is raised again naming the keyword its field
    came from (labels: core field -> label; a field not there is named as itself)."""
    try:
        return fn(*args)
    except InputError as e:
        raise renamed(function, e, labels) from None


def renamed(function, e, labels):
    field = getattr(e, "field", "")
    file = getattr(e, "file", "")
    reason = getattr(e, "reason", str(e))
    if file not in ("", "<python>"):
        # A file's field (a hardware or profile JSON): its message names the file.
        message = "ringsim.%s: %s" % (function, str(e).replace("<python>: ", ""))
        label = None
    elif field in ("", "request", "sweep", "plan"):
        message = "ringsim.%s: %s" % (function, reason)
        label = None
    else:
        base, bracket, rest = field.partition("[")
        base = base.replace("-", "_")
        label = labels(base) if callable(labels) else labels.get(base, keyword(base))
        if bracket:
            label = indexed(label, rest[:-1])
        message = "ringsim.%s: %s: %s" % (function, label, reason)
    new = InputError(message)
    new.file, new.field, new.reason, new.keyword = file, field, reason, label
    return new
