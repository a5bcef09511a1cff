"""Solver parameters as a user meets them: each field documented once, keys typed from
text (``-p KEY=VALUE``) or a TOML file (``--params FILE.toml``), renamed keys, and the
listing `tspcl algorithms`, ``solve --help`` and the README's table are made from.

A solver's parameters are a frozen dataclass whose fields are declared with
:func:`param` (default and one line of meaning).  A class may name the keys it used to
have in ``RENAMED`` (old key -> field): such a key is still accepted, with a one-line
note on stderr naming the new key.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import field

from .errors import DataError, MissingInputError, UsageError

_NOTED: set = set()   # the renamed keys already noted in this process


def param(default, doc: str):
    """A parameter field: its default and one line saying what it means."""
    return field(default=default, metadata={"doc": doc})


def param_doc(params_type: type, name: str) -> str:
    """The doc of field `name`, from the nearest class in the MRO that declares it
    with :func:`param` (a subclass may change only the default)."""
    for cls in params_type.__mro__:
        f = getattr(cls, "__dataclass_fields__", {}).get(name)
        if f is not None and "doc" in f.metadata:
            return f.metadata["doc"]
    raise KeyError(f"{params_type.__name__}.{name} has no doc")


def auto_or_number(name: str, text: str, kind: type, lo, hi, what: str):
    """A parameter given as ``auto`` (None) or a number of `kind` (int or float) from lo
    to hi, `what` naming it in the message ("a count", "a share"); UsageError otherwise."""
    if text == "auto":
        return None
    try:
        value = kind(text)
    except (TypeError, ValueError):
        value = None
    if value is None or not lo <= value <= hi:   # nan is in no range
        raise UsageError(f"{name} must be auto or {what} from {lo} to {hi} (got {text!r})")
    return value


def fields_of(params_type: type) -> list[tuple[str, object, str]]:
    """(name, default, doc) of every parameter, in declaration order."""
    defaults = params_type()
    return [(f.name, getattr(defaults, f.name), param_doc(params_type, f.name))
            for f in dataclasses.fields(params_type)]


def accepted_keys(params_type: type) -> set[str]:
    """Every key a parameter may be given by: the fields and their RENAMED old keys."""
    return {f.name for f in dataclasses.fields(params_type)} | set(getattr(params_type, "RENAMED", {}))


def field_name(params_type: type, key: str, solver: str) -> str:
    """The field a key names (``-`` read as ``_``; a renamed key noted on stderr once);
    UsageError naming the solver's parameters if there is none."""
    name = key.replace("-", "_")
    names = [f.name for f in dataclasses.fields(params_type)]
    if name in names:
        return name
    new = getattr(params_type, "RENAMED", {}).get(name)
    if new is not None:
        if (solver, name) not in _NOTED:
            _NOTED.add((solver, name))
            print(f"tspcl: {solver}: parameter {key!r} is now {new!r} (the old name still works, "
                  "for now)", file=sys.stderr)
        return new
    raise UsageError(f"{solver} has no parameter {key!r} (parameters: {', '.join(names) or 'none'})")


def typed_values(params_type: type, values: dict[str, str], solver: str) -> dict:
    """Field -> typed value of KEY=VALUE strings (renamed keys read as their new names);
    UsageError naming the key whose name or value is wrong."""
    typed = {}
    for key, raw in values.items():
        name = field_name(params_type, key, solver)
        typed[name] = convert(params_type, name, raw, key)
    return typed


def convert(params_type: type, name: str, raw: str, key: str):
    """A parameter's value from its text, typed by the field's default (or its
    annotation where the default is None); a float that is not finite is refused."""
    f = next(f for f in dataclasses.fields(params_type) if f.name == name)
    default = getattr(params_type(), name)
    try:
        if isinstance(default, bool):
            if raw.lower() not in ("1", "0", "true", "false", "yes", "no"):
                raise ValueError
            return raw.lower() in ("1", "true", "yes")
        if isinstance(default, int) or (default is None and "int" in str(f.type)):
            return int(raw)
        if isinstance(default, float) or (default is None and "float" in str(f.type)):
            value = float(raw)
            if not math.isfinite(value):
                raise UsageError(f"parameter {key}: {raw!r} is not a finite number")
            return value
        return raw
    except ValueError:
        raise UsageError(f"parameter {key}: {raw!r} is not a valid {type(default).__name__}") from None


def value_text(value) -> str:
    """A TOML value as -p would give it (booleans as true/false)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def read_toml(path: str, what: str) -> dict:
    """A TOML file's table: MissingInputError (66) if it cannot be read, DataError (65)
    if it is not TOML; `what` names the file's role in the messages."""
    import tomllib

    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise MissingInputError(f"{path}: no such {what}") from None
    except OSError as e:
        raise MissingInputError(f"{path}: cannot read {what} ({e.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise DataError(path, None, f"not valid TOML ({e})") from None


def params_file(path: str) -> dict[str, str]:
    """The KEY = VALUE pairs of a ``--params`` file, as -p text: top-level numbers,
    strings and booleans (a table or an array is a UsageError naming the key; the
    caller adds the file, as it does to the errors of the keys and values)."""
    values = {}
    for key, value in read_toml(path, "parameter file").items():
        if isinstance(value, (dict, list)) or not isinstance(value, (bool, int, float, str)):
            raise UsageError(f"parameter {key}: give a number, a string or a boolean "
                             f"(got {type(value).__name__})")
        values[key] = value_text(value)
    return values


def default_text(value) -> str:
    """A default as the listing shows it (None: unset, the solver decides)."""
    return "unset" if value is None else value_text(value)


def algorithm_listing(specs, markdown: bool = False) -> str:
    """Every algorithm of `specs` with its summary and each parameter's default and
    meaning: plain text (`tspcl algorithms`) or the README's markdown table."""
    if markdown:
        lines = ["| `--algo` | what | parameters (`-p KEY=VALUE`; default in brackets) |",
                 "| --- | --- | --- |"]
        for spec in specs:
            params = "; ".join(f"`{name}` ({default_text(default)}): {doc}"
                               for name, default, doc in fields_of(spec.params_type))
            lines.append(f"| `{spec.name}` | {spec.summary} | {params or 'none'} |")
        renamed: dict = {}
        for spec in specs:
            for old, new in getattr(spec.params_type, "RENAMED", {}).items():
                renamed.setdefault((old, new), []).append(spec.name)
        lines += ["", "Keys renamed so that one concept has one name everywhere (the old key still "
                  "works, with a note on stderr): "
                  + ", ".join(f"`{old}` -> `{new}` ({', '.join(algos)})"
                              for (old, new), algos in sorted(renamed.items())) + "."]
        return "\n".join(lines) + "\n"
    out = []
    for spec in specs:
        out.append(f"{spec.name}: {spec.summary}")
        rows = [(f"{name} = {default_text(default)}", doc) for name, default, doc in fields_of(spec.params_type)]
        width = max((len(left) for left, _ in rows), default=0)
        out += [f"    {left:<{width}}  {doc}" for left, doc in rows] or ["    (no parameters)"]
        renamed = getattr(spec.params_type, "RENAMED", {})
        if renamed:
            out.append("    old keys: " + ", ".join(f"{old} -> {new}" for old, new in renamed.items()))
    return "\n".join(out) + "\n"
