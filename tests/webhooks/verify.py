"""Verify captured webhook deliveries with the Standard Webhooks reference library.

Usage: verify.py CASES.json

CASES.json is a list of deliveries as a receiver got them: {"secret": the subscription's
secret, "body": the exact body bytes in hex, "headers": {name: value}}. Prints one line: the
JSON list of the library's verdicts, in order, "verified" or "refused: <its reason>".
"""

import json
import sys

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def verdict(case):
    try:
        Webhook(case["secret"]).verify(bytes.fromhex(case["body"]), case["headers"])
    except WebhookVerificationError as e:
        return f"refused: {e}"
    return "verified"


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    print(json.dumps([verdict(c) for c in cases]))


if __name__ == "__main__":
    main()
