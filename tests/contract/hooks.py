"""Schemathesis hooks for the TNS contract run: what the OpenAPI document states outside JSON
Schema's own vocabulary, taught to the generator from the document itself.

- The custom string formats `tckn` and `vkn` (identity and tax numbers with check digits), which
  the document defines in its description: generated here by their published rules, written
  independently of the server's code.
- `x-tns-not-before` on a request schema: pairs of (earlier, later) lists of JSON pointers that a
  valid body orders (arrival not before departure). Positive bodies that break the order are not
  generated; negative ones are left alone.
- `x-tns-other-than` on a request schema: pairs of JSON pointers whose values a valid body keeps
  apart (a second driver is another person than the first); bodies that break it are not
  generated either.

And one thing the run must not do: let the server's webhook deliveries leave the machine. Every
endpoint URL the document admits is sent with its host and port made loopback's discard port.
"""

import re

import schemathesis
from hypothesis import strategies as st


def tckn_check(first9):
    odd = sum(first9[0:9:2])
    even = sum(first9[1:8:2])
    d10 = (7 * odd - even) % 10
    d11 = (sum(first9) + d10) % 10
    return d10, d11


@st.composite
def tckn(draw):
    digits = [draw(st.integers(1, 9))] + [draw(st.integers(0, 9)) for _ in range(8)]
    d10, d11 = tckn_check(digits)
    return "".join(map(str, digits + [d10, d11]))


def vkn_check(first9):
    total = 0
    for p, d in enumerate(first9):
        tmp = (d + 9 - p) % 10
        v = (tmp * 2 ** (9 - p)) % 9
        if tmp != 0 and v == 0:
            v = 9
        total += v
    return (10 - total % 10) % 10


@st.composite
def vkn(draw):
    digits = [draw(st.integers(0, 9)) for _ in range(9)]
    return "".join(map(str, digits + [vkn_check(digits)]))


schemathesis.openapi.format("tckn", tckn())
schemathesis.openapi.format("vkn", vkn())

# Self-check against the published test vectors, so a broken generator fails loudly.
assert tckn_check([1, 7, 2, 9, 1, 7, 1, 6, 0]) == (6, 0)
assert tckn_check([1, 0, 0, 0, 0, 0, 0, 0, 1]) == (4, 6)
assert vkn_check([4, 5, 4, 0, 5, 3, 6, 9, 2]) == 0
assert vkn_check([1, 2, 3, 4, 5, 6, 7, 8, 9]) == 0


def pointer(body, ptr):
    at = body
    for part in ptr.strip("/").split("/"):
        if not isinstance(at, dict) or part not in at:
            return None
        at = at[part]
    return at


def orders(context):
    """The body's component's (`x-tns-not-before`, `x-tns-other-than`) lists."""
    operation = getattr(context, "operation", None)
    if operation is None:
        return [], []
    try:
        body = operation.definition.raw.get("requestBody", {})
        schema = body["content"]["application/json"]["schema"]
        ref = schema.get("$ref", "")
        name = ref.rsplit("/", 1)[-1]
        component = operation.schema.raw_schema["components"]["schemas"][name]
    except (KeyError, AttributeError, TypeError):
        return [], []
    return component.get("x-tns-not-before", []), component.get("x-tns-other-than", [])


@schemathesis.hook
def filter_body(context, body):
    """Keep a body only if it keeps the orders its schema lists (when it has the fields)."""
    not_before, other_than = orders(context)
    for one, other in other_than:
        a, b = pointer(body, one), pointer(body, other)
        if a is not None and b is not None and str(a) == str(b):
            return False
    for earlier, later in not_before:
        a = [pointer(body, p) for p in earlier]
        b = [pointer(body, p) for p in later]
        if None in a or None in b or not all(isinstance(x, str) for x in a + b):
            continue
        if b < a:
            return False
    return True


# Nothing listens there: a delivery fails at once, and nothing leaves the machine.
LOOPBACK = "http://127.0.0.1:9"


def endpoint_rule(case):
    schema = case.operation.schema.raw_schema["components"]["schemas"]["EndpointUrl"]
    return re.compile(schema["pattern"]), schema["maxLength"]


@schemathesis.hook
def before_call(context, case, **kwargs):
    """Send a webhook endpoint the document admits to loopback (path and query kept). Only an
    admitted one: an invalid URL stays as generated, so a negative case stays negative."""
    body = case.body
    if not isinstance(body, dict) or not isinstance(body.get("endpoint_url"), str):
        return
    url = body["endpoint_url"]
    pattern, longest = endpoint_rule(case)
    if len(url) > longest or not pattern.fullmatch(url):
        return
    rest = re.sub(r"^https?://[^/?]*", "", url)
    body["endpoint_url"] = LOOPBACK + rest
