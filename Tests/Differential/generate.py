#!/usr/bin/env python3
"""Differential cases for Courier's JSON Schema validator, judged by python-jsonschema.

    generate.py OUTPUT.json [--per-source N]

For each schema in SCHEMAS (draft 2020-12 and draft-07) it gathers instances from four sources, all
deterministic (hypothesis runs derandomized, mutations use a seeded Random):

- ``valid``:    hypothesis-jsonschema's ``from_schema(schema)``;
- ``not``:      ``from_schema({"not": schema})``, near-misses that the generator believes invalid;
- ``mutation``: small edits of the instances above (a key dropped or added, an item duplicated, a number
                nudged, a type changed);
- ``example``:  hand-picked edge cases listed beside the schema (schemas hypothesis-jsonschema cannot
                generate for, such as recursive ones, live on these and their mutations).

Every instance is judged by python-jsonschema twice: as shipped (``python``), and with the two places where it
departs from the specification replaced (``expected``, which is what Courier must answer):

- ``multipleOf`` with a fractional divisor divides binary floats (``0.3 / 0.1 == 2.9999999999999996``),
  while the specification asks whether the division "results in an integer" (2020-12 Validation §6.2.1,
  draft-07 Validation §6.2.1): the replacement divides the exact decimal values the JSON text spells.
- ``pattern`` and ``patternProperties`` use Python's ``re``, while patterns "should be valid according to
  the ECMA-262 regular expression dialect" (2020-12 Core §6.4, draft-07 Validation §4.3): ``\\d`` and
  ``\\w`` match only ASCII, ``\\s`` is ECMA-262's WhiteSpace and LineTerminator set, ``.`` stops at every
  line terminator and ``$`` only at the end of the input. The replacement translates the (simple) patterns
  of SCHEMAS to Python syntax with those meanings.
- ``format: date-time`` (asserted) rejects every leap second (rfc3339-validator), while RFC 3339 §5.6-5.7,
  which 2020-12 Validation §7.3.1 and draft-07 §7.3.1 cite, allows a second of 60: the replacement accepts
  `:60` on the last minute of a UTC day, as JSON-Schema-Test-Suite's optional/format/date-time.json does.
- ``format: date-time`` (asserted) accepts a final newline (``"1985-04-12T23:20:50.52Z\\n"``): rfc3339-validator's
  expression ends in ``$``, which in Python also matches before a final ``\\n``. RFC 3339 §5.6's ``date-time``
  has no such character: the replacement rejects it.

A case whose two verdicts differ carries the name of the replacement that changed it in ``deviation``.
"""

import argparse
import json
import math
import random
import re
import sys
import warnings
from fractions import Fraction

from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker, validators
from jsonschema.exceptions import ValidationError

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

warnings.simplefilter("ignore")

D2020 = "https://json-schema.org/draft/2020-12/schema"
D7 = "http://json-schema.org/draft-07/schema#"


def s2020(schema):
    return {"$schema": D2020, **schema}


def s7(schema):
    return {"$schema": D7, **schema}


# name, schema, options, hand-picked instances. Options: "assertFormat" (Courier's and python-jsonschema's
# format assertion), "noNegation" (hypothesis-jsonschema finds no instance of {"not": schema} in reasonable
# time for these: their near-misses come from the examples and mutations alone).
SCHEMAS = [
    ("type_list", s2020({"type": ["integer", "string", "null"]}), {}, [1, 1.0, 1.5, "", None, True, [], {}]),
    ("enum_mixed", s2020({"enum": [1, "one", [1], {"a": 1}, None, True]}), {},
     [1, 1.0, True, False, 0, "one", [1], [1.0], [True], {"a": 1}, {"a": 1.0}, {"a": True}, None, "One"]),
    ("const_object", s2020({"const": {"a": [1, 2.5, {"b": None}], "c": False}}), {},
     [{"a": [1, 2.5, {"b": None}], "c": False}, {"c": False, "a": [1.0, 2.5, {"b": None}]},
      {"a": [1, 2.5, {"b": None}], "c": 0}, {"a": [True, 2.5, {"b": None}], "c": False},
      {"a": [1, 2.5, {"b": None}], "c": False, "d": 1}]),
    ("number_bounds", s2020({"type": "number", "minimum": -10, "exclusiveMaximum": 100.5}), {},
     [-10, -10.000001, 100.5, 100.49999, 0, 1e2, -1e1, "5"]),
    ("integer_multiple", s2020({"type": "integer", "multipleOf": 7}), {},
     [0, 7, -14, 7.0, 14.5, 700000000000000000000000000007, 12345678901234567890123456789]),
    ("decimal_multiple", s2020({"multipleOf": 0.01, "maximum": 1000}), {},
     [19.99, 0.07, 1000, 0.3, 1e-5, 0.015, 999.99, 1000.01, 4.35, 1.15]),
    ("decimal_multiple_tenth", s2020({"type": "number", "multipleOf": 0.1}), {},
     [0.3, 0.7, 1.1, 2.675, 0.1, 3, 0.35, 1e-1, 123456.7, 1e20]),
    ("decimal_multiple_mixed", s2020({"multipleOf": 1.5}), {}, [4.5, 3, 1.5, 0.75, 7.5, 1e300, -6]),
    ("tiny_multiple", s2020({"multipleOf": 1e-300}), {}, [5e-324, 1e-300, 2e-300, 1.5e-300, 1, 1e308, 0.1]),
    ("string_length", s2020({"type": "string", "minLength": 2, "maxLength": 5}), {},
     ["ab", "a", "abcde", "abcdef", "💩💩", "💩", "e\u0301", "\u0000\u0000"]),
    ("pattern_anchored", s2020({"type": "string", "pattern": "^[a-z]{2,4}-\\d{3}$"}), {},
     ["ab-123", "ab-123\n", "ab-١٢٣", "abcd-000", "abcde-000", "AB-123", "x-123"]),
    ("pattern_search", s2020({"pattern": "ab+c|x\\.y"}), {}, ["abbc", "zzabcz", "x.y", "xzy", "ac", 12]),
    ("pattern_space_word", s2020({"pattern": "^\\s*\\w+\\s*$"}), {},
     [" word ", "\u00a0word\u2028", "\u001cword\u001c", "\u0085w", "wörd", "w_1", "two words", "\ufeffw\u3000"]),
    ("pattern_dot", s2020({"pattern": "^a.c$"}), {}, ["abc", "a\nc", "a\rc", "a\u2028c", "a💩c", "ac", "a\u0085c"]),
    ("format_annotation", s2020({"type": "string", "format": "email", "maxLength": 20}), {},
     ["not an email", "a@b.c", ""]),
    ("format_assert", s2020({"properties": {
        "date": {"format": "date"}, "ipv4": {"format": "ipv4"}, "uuid": {"format": "uuid"},
        "dateTime": {"format": "date-time"}, "ipv6": {"format": "ipv6"}}}), {"assertFormat": True, "noNegation": True},
     [{"date": "2020-02-29"}, {"date": "2021-02-29"}, {"date": "2020-1-01"}, {"date": "20200101"},
      {"ipv4": "192.168.0.1"}, {"ipv4": "256.1.1.1"}, {"ipv4": "1.2.3"}, {"ipv4": "01.2.3.4"},
      {"uuid": "2eb8aa08-aa98-11ea-b4aa-73b441d16380"}, {"uuid": "2eb8aa08aa9811eab4aa73b441d16380"},
      {"uuid": "2eb8aa08-aa98-11ea-b4aa-73b441d1638"}, {"dateTime": "1985-04-12T23:20:50.52Z"},
      {"dateTime": "1985-04-12T23:20:50.52"}, {"dateTime": "1985-04-12 23:20:50Z"},
      {"dateTime": "1990-12-31T15:59:60-08:00"}, {"dateTime": "1998-12-31T23:58:60Z"}, {"dateTime": "1998-12-31T23:59:60Z"},
      {"dateTime": "1985-04-12T23:20:50.52Z\n"}, {"ipv6": "::1"}, {"ipv6": "1:2:3:4:5:6:7:8:9"},
      {"ipv6": "::ffff:192.168.0.1"}, {"ipv6": "12345::"}, {"date": 20200101}]),
    ("prefix_items", s2020({"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": {"type": "boolean"}}),
     {}, [[], [1], [1, "a"], [1, "a", True, False], [1, "a", 0], ["a", 1], [1.0, "", True]]),
    ("prefix_items_closed", s2020({"prefixItems": [{"type": "integer"}], "items": False}), {}, [[], [1], [1, 2]]),
    ("contains_bounds", s2020({"contains": {"type": "integer", "minimum": 5}, "minContains": 2, "maxContains": 3}),
     {}, [[5, 6], [5], [5, 6, 7, 8], [5, 6, 7, "x"], [], [5.0, 6.0], {"a": 5}]),
    ("unique_items", s2020({"type": "array", "uniqueItems": True, "maxItems": 6}), {},
     [[1, 1.0], [1, True], [0, False], [{"a": 1}, {"a": 1.0}], [[1], [True]], [{"a": 1, "b": 2}, {"b": 2, "a": 1}],
      [None, 0, "", False, [], {}], ["a", "A"]]),
    ("array_bounds", s2020({"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 4}), {},
     [[], [1], [1, 2, 3, 4, 5], [1, "2"], [1e308, -1e-308]]),
    ("object_closed", s2020({"type": "object", "properties": {"name": {"type": "string"},
                                                               "age": {"type": "integer", "minimum": 0}},
                             "required": ["name"], "additionalProperties": False}), {},
     [{"name": "x"}, {"name": "x", "age": 0}, {"name": "x", "age": -1}, {"age": 3}, {"name": "x", "extra": 1},
      {"name": "x", "age": 3.0}, {"name": 3}]),
    ("pattern_properties", s2020({"patternProperties": {"^x-": {"type": "string"}, "^[0-9]+$": {"type": "integer"}},
                                  "additionalProperties": {"type": "boolean"}}), {},
     [{"x-a": "s"}, {"x-a": 1}, {"12": 1}, {"12": "s"}, {"12\n": True}, {"١٢": True}, {"other": True}, {"other": 1}]),
    ("property_names", s2020({"propertyNames": {"pattern": "^[a-z]+$", "maxLength": 3}, "maxProperties": 3}), {},
     [{}, {"abc": 1}, {"abcd": 1}, {"A": 1}, {"a": 1, "b": 2, "c": 3, "d": 4}, {"é": 1}, {"ab\n": 1}]),
    ("dependent_required", s2020({"dependentRequired": {"credit": ["billing"], "billing": ["address"]},
                                  "minProperties": 1}), {},
     [{"credit": 1}, {"credit": 1, "billing": 2}, {"credit": 1, "billing": 2, "address": 3}, {"address": 1}, {}]),
    ("dependent_schemas", s2020({"dependentSchemas": {"a": {"required": ["b"],
                                                            "properties": {"b": {"type": "integer"}}}}}), {},
     [{"a": 1}, {"a": 1, "b": 2}, {"a": 1, "b": "2"}, {"b": "2"}, []]),
    ("ref_defs", s2020({"$defs": {"positive": {"type": "integer", "minimum": 1}}, "type": "array",
                        "items": {"$ref": "#/$defs/positive"}}), {}, [[1, 2], [0], [1.0], ["1"]]),
    ("recursive_tree", s2020({"$defs": {"node": {
        "type": "object", "required": ["value"], "additionalProperties": False,
        "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
        "$ref": "#/$defs/node"}), {},
     [{"value": 1}, {"value": 1, "children": []}, {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]},
      {"value": 1, "children": [{"value": 2, "children": [{"value": "3"}]}]},
      {"value": 1, "children": [{"value": 2, "children": [{"value": 3, "x": 0}]}]}, {"children": []}]),
    ("recursive_root", s2020({"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#"}, "maxItems": 3}]}),
     {}, [1, [1, [2, [3]]], [1, [2, ["x"]]], [[[[[]]]]], [1, 2, 3, 4], [[1, 2, 3, [1, 2, 3, 4]]]]),
    ("all_of", s2020({"allOf": [{"type": "object", "required": ["a"]}, {"properties": {"a": {"type": "integer"}}},
                                {"maxProperties": 2}]}), {}, [{"a": 1}, {"a": "1"}, {"a": 1, "b": 2, "c": 3}, {}]),
    ("any_of", s2020({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer", "minimum": 10}]}), {},
     ["abc", "abcd", 10, 9, 10.0, 10.5]),
    ("one_of", s2020({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 2}]}), {},
     [1, 2, 2.0, 2.5, 1.5, "2"]),
    ("not_schema", s2020({"not": {"type": "object", "required": ["x"]}}), {"noNegation": True}, [{"x": 1}, {"y": 1}, 1, None]),
    ("if_then_else", s2020({"if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                            "then": {"required": ["a"]}, "else": {"required": ["b"]}}), {},
     [{"kind": "a", "a": 1}, {"kind": "a", "b": 1}, {"kind": "b", "b": 1}, {"b": 1}, {}, "string"]),
    ("unevaluated_properties", s2020({
        "properties": {"a": {"type": "integer"}}, "allOf": [{"properties": {"b": {"type": "string"}}}],
        "anyOf": [{"properties": {"c": {"type": "boolean"}}, "required": ["c"]}, {"properties": {"d": {"type": "null"}}}],
        "unevaluatedProperties": False}), {},
     [{"a": 1, "b": "x", "c": True}, {"a": 1, "d": None}, {"c": True, "d": None}, {"e": 1}, {"c": 1, "d": None},
      {"a": 1, "c": True, "z": 0}]),
    ("unevaluated_items", s2020({"prefixItems": [{"type": "integer"}],
                                 "allOf": [{"prefixItems": [True, {"type": "string"}]}],
                                 "contains": {"type": "boolean"}, "unevaluatedItems": False}), {},
     [[1, "a", True], [1, "a", True, False], [1, "a", 2, True], [True], [1, "a"], [1, True, "a"]]),
    ("unevaluated_if_then", s2020({"if": {"properties": {"t": {"const": 1}}, "required": ["t"]},
                                   "then": {"properties": {"x": {"type": "string"}}},
                                   "else": {"properties": {"y": True}},
                                   "properties": {"t": True}, "unevaluatedProperties": False}), {},
     [{"t": 1, "x": "s"}, {"t": 1, "y": 0}, {"t": 2, "y": 0}, {"t": 2, "x": "s"}, {"y": 1}, {}]),
    ("unevaluated_nested_ref", s2020({"$defs": {"base": {"properties": {"id": {"type": "integer"}}}},
                                      "$ref": "#/$defs/base", "properties": {"name": {"type": "string"}},
                                      "unevaluatedProperties": {"type": "boolean"}}), {},
     [{"id": 1, "name": "n"}, {"id": 1, "other": True}, {"id": 1, "other": 1}, {}]),
    ("ref_with_siblings", s2020({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "maxLength": 3}), {},
     ["abc", "abcd", 1]),
    ("draft7_tuple_items", s7({"items": [{"type": "integer"}, {"type": "string"}], "additionalItems": False}), {},
     [[], [1], [1, "a"], [1, "a", 2], ["a"], {"0": 1}]),
    ("draft7_ref_ignores_siblings", s7({"definitions": {"s": {"type": "string"}},
                                        "properties": {"p": {"$ref": "#/definitions/s", "maxLength": 2}}}), {},
     [{"p": "ab"}, {"p": "abcdef"}, {"p": 1}]),
    ("draft7_dependencies", s7({"dependencies": {"a": ["b"], "c": {"required": ["d"]}}}), {"noNegation": True},
     [{"a": 1}, {"a": 1, "b": 1}, {"c": 1}, {"c": 1, "d": 1}, {"b": 1}]),
    ("draft7_exclusive", s7({"type": "number", "exclusiveMinimum": 0, "maximum": 10, "multipleOf": 0.5}), {},
     [0, 0.5, 10, 10.5, 2.25, 7.5, -0.5]),
    ("draft7_contains_if", s7({"contains": {"const": 3}, "if": {"minItems": 3}, "then": {"uniqueItems": True}}), {},
     [[3], [3, 3], [3, 3, 3], [1, 2, 3], [3.0], [1, 2]]),
    ("draft7_recursive_list", s7({"definitions": {"list": {
        "type": ["null", "object"], "properties": {"head": {"type": "number"}, "tail": {"$ref": "#/definitions/list"}}}},
        "$ref": "#/definitions/list"}), {},
     [None, {"head": 1, "tail": None}, {"head": 1, "tail": {"head": 2, "tail": {"head": "x"}}}, {"tail": 3}]),
    ("draft7_ignores_2020_keywords", s7({"properties": {"a": True}, "unevaluatedProperties": False,
                                         "prefixItems": [{"type": "string"}], "dependentRequired": {"a": ["b"]}}),
     {}, [{"a": 1, "b": 2}, {"a": 1}, {"z": 1}, [1]]),
    ("draft7_format_assert", s7({"properties": {"date": {"format": "date"}, "ipv4": {"format": "ipv4"},
                                                "time": {"format": "time"}}}), {"assertFormat": True, "noNegation": True},
     [{"date": "2020-02-29"}, {"date": "2020-13-01"}, {"ipv4": "1.1.1.1"}, {"ipv4": "1.1.1.01"},
      {"time": "08:30:06Z"}, {"time": "08:30:06"}, {"time": "24:00:00Z"}]),
]

# ECMA-262 WhiteSpace and LineTerminator code points (what `\s` matches there).
ECMA_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
ECMA_CLASSES = {"d": "0-9", "w": "A-Za-z0-9_", "s": ECMA_SPACE}


def ecma_to_python(pattern):
    """Python `re` syntax with ECMA-262 meanings for the escapes, `.` and `$` that SCHEMAS use."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            if e.lower() in ECMA_CLASSES:
                body = ECMA_CLASSES[e.lower()]
                if in_class:
                    if e.isupper():
                        raise ValueError(f"negated class escape inside a class: {pattern}")
                    out.append(body)
                else:
                    out.append(("[^" if e.isupper() else "[") + body + "]")
            else:
                out.append(c + e)
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
        elif c == ".":
            out.append("[^\\n\\r\\u2028\\u2029]")
        elif c == "$":
            out.append("\\Z")
        else:
            out.append(c)
        i += 1
    return re.compile("".join(out))


def exact_multiple_of(validator, divisor, instance, schema):
    if not validator.is_type(instance, "number"):
        return
    if (Fraction(repr(instance)) / Fraction(repr(divisor))).denominator != 1:
        yield ValidationError(f"{instance!r} is not a multiple of {divisor}")


def ecma_pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not ecma_to_python(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def ecma_pattern_properties(validator, pattern_properties, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        regex = ecma_to_python(pattern)
        for key, value in instance.items():
            if regex.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def ecma_additional_properties(validator, additional, instance, schema):
    """additionalProperties, with patternProperties matched the ECMA-262 way."""
    if not validator.is_type(instance, "object"):
        return
    patterns = [ecma_to_python(p) for p in schema.get("patternProperties", {})]
    extras = [k for k in instance if k not in schema.get("properties", {}) and not any(p.search(k) for p in patterns)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        yield ValidationError(f"additional properties {extras!r} are not allowed")


LEAP_SECOND = re.compile(r"^(\d{4}-\d{2}-\d{2}[Tt])(\d{2}):(\d{2}):60(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))\Z")


def leap_second_date_time(checker):
    """The draft's date-time check, with RFC 3339's leap second: `:60` on the last minute of a UTC day."""
    stock = checker.checkers["date-time"][0]

    def check(instance):
        if not isinstance(instance, str):
            return True
        match = LEAP_SECOND.match(instance)
        if not match:
            return stock(instance)
        day, hour, minute, fraction, zone, sign, zone_hour, zone_minute = match.groups()
        offset = 0 if sign is None else (1 if sign == "+" else -1) * (int(zone_hour) * 60 + int(zone_minute))
        if (int(hour) * 60 + int(minute) - offset) % 1440 != 23 * 60 + 59:
            return False
        return stock(f"{day}{hour}:{minute}:59{fraction or ''}{zone}")

    return check


def corrected(cls, fixes):
    """`cls` with the named departures from the specification replaced (see the module's documentation)."""
    replaced = {}
    if "multipleOf" in fixes:
        replaced["multipleOf"] = exact_multiple_of
    if "pattern" in fixes:
        replaced.update(pattern=ecma_pattern, patternProperties=ecma_pattern_properties,
                        additionalProperties=ecma_additional_properties)
    return validators.extend(cls, replaced)


def no_final_newline(check):
    """rfc3339-validator's regular expression ends in `$`, which also matches before a final newline."""
    return lambda instance: not (isinstance(instance, str) and instance.endswith("\n")) and check(instance)


def format_checker(cls, fixes):
    checker = FormatChecker(formats=())
    checker.checkers = dict(cls.FORMAT_CHECKER.checkers)
    if "date-time" in checker.checkers:
        check = checker.checkers["date-time"][0]
        if "leapSecond" in fixes:
            check = leap_second_date_time(cls.FORMAT_CHECKER)
        if "dateTimeNewline" in fixes:
            check = no_final_newline(check)
        checker.checkers["date-time"] = (check, ())
    return checker


FIXES = ("multipleOf", "pattern", "leapSecond", "dateTimeNewline")


def draw(strategy, count):
    """`count` examples of `strategy`, the same ones on every run."""
    found = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(strategy)
    def collect(value):
        found.append(value)

    try:
        collect()
    except Exception:  # an unsatisfiable or unsupported schema: the other sources cover it
        pass
    return found


def is_json(value):
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (ValueError, TypeError):
        return False


def names_in(schema, found):
    """Property names a schema mentions, so mutations add keys that matter."""
    if isinstance(schema, dict):
        for key in ("properties", "patternProperties", "dependentRequired", "dependentSchemas", "dependencies"):
            if isinstance(schema.get(key), dict):
                found.update(k for k in schema[key] if not k.startswith("^"))
        if isinstance(schema.get("required"), list):
            found.update(schema["required"])
        for value in schema.values():
            names_in(value, found)
    elif isinstance(schema, list):
        for value in schema:
            names_in(value, found)
    return found


SCALARS = [0, 1, -1, 2.5, 0.1, "", "a", True, False, None, [], {}]


def mutate(value, rng, keys):
    if isinstance(value, dict):
        out = dict(value)
        if out and rng.random() < 0.7:
            key = rng.choice(sorted(out))
            roll = rng.random()
            if roll < 0.3:
                del out[key]
            else:
                out[key] = mutate(out[key], rng, keys)
        else:
            out[rng.choice(keys)] = rng.choice(SCALARS)
        return out
    if isinstance(value, list):
        out = list(value)
        if out and rng.random() < 0.7:
            index = rng.randrange(len(out))
            roll = rng.random()
            if roll < 0.3:
                del out[index]
            elif roll < 0.6:
                out.insert(index, out[index])
            else:
                out[index] = mutate(out[index], rng, keys)
        else:
            out.append(rng.choice(SCALARS))
        return out
    if isinstance(value, bool):
        return rng.choice([not value, int(value), None, [value]])
    if isinstance(value, int):
        return rng.choice([value + 1, value - 1, -value, value * 10, float(value), value + 0.5, str(value), True])
    if isinstance(value, float):
        return rng.choice([value * 3, value + 0.1, -value, value / 10, math.floor(value), round(value, 2) + 0.01, 0.3])
    if isinstance(value, str):
        return rng.choice([value + "x", value[:-1], "", value.upper(), value + "\n", "1" + value, value * 2, 1])
    return rng.choice(SCALARS)


def canonical(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def cases_for(name, schema, options, examples, per_source, rng):
    cls = Draft7Validator if schema.get("$schema") == D7 else Draft202012Validator

    def validator(fixes):
        checker = format_checker(cls, fixes) if options.get("assertFormat") else None
        return corrected(cls, fixes)(schema, format_checker=checker)

    stock, fixed = validator(()), validator(FIXES)
    singly = {fix: validator((fix,)) for fix in FIXES}

    generation = {k: v for k, v in schema.items() if k != "$schema"}
    sources = [("example", list(examples)),
               ("valid", draw(from_schema(generation), per_source)),
               ("not", [] if options.get("noNegation") else draw(from_schema({"not": generation}), per_source))]
    seeds = [v for _, found in sources for v in found] or list(SCALARS)
    keys = sorted(names_in(schema, {"x-a", "12", "zz"}))
    sources.append(("mutation", [mutate(rng.choice(seeds), rng, keys) for _ in range(per_source)]))

    instances, seen = [], set()
    for source, found in sources:
        for instance in found:
            if not is_json(instance):
                continue
            key = canonical(instance)
            if key in seen:
                continue
            seen.add(key)
            python, expected = stock.is_valid(instance), fixed.is_valid(instance)
            case = {"source": source, "instance": instance, "python": python, "expected": expected}
            if python != expected:
                case["deviation"] = ",".join(f for f in FIXES if singly[f].is_valid(instance) != python)
            instances.append(case)
    return {"name": name, "assertFormat": bool(options.get("assertFormat")), "schema": schema, "instances": instances}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output")
    parser.add_argument("--per-source", type=int, default=15, help="instances drawn per source and schema")
    arguments = parser.parse_args()
    rng = random.Random(20261124)
    result = {
        "generator": {"jsonschema": _version("jsonschema"),
                      "hypothesis-jsonschema": _version("hypothesis-jsonschema"),
                      "hypothesis": _version("hypothesis")},
        "schemas": [cases_for(name, schema, options, examples, arguments.per_source, rng)
                    for name, schema, options, examples in SCHEMAS],
    }
    with open(arguments.output, "w", encoding="utf-8") as out:
        json.dump(result, out, ensure_ascii=False, allow_nan=False)
    count = sum(len(s["instances"]) for s in result["schemas"])
    deviations = sum(1 for s in result["schemas"] for c in s["instances"] if "deviation" in c)
    print(f"{len(result['schemas'])} schemas, {count} instances, {deviations} where python-jsonschema "
          f"departs from the specification", file=sys.stderr)


def _version(package):
    from importlib.metadata import version
    return version(package)


if __name__ == "__main__":
    main()
