"""One whole flow through a client generated from the served OpenAPI document (client.sh):
register, a vehicle, a driver, a scheduled journey with passengers, a webhook subscription,
submit, the submission delivered, the webhook records. Every call goes through the generated
functions and models; a wrong status, a response the models cannot read, or a missing outcome
fails with a message saying which step."""

import datetime
import sys
import time
import uuid

from tns_client import AuthenticatedClient, Client
from tns_client.api.auth import register
from tns_client.api.journeys import bulk_upsert_passengers, create_journey, get_journey
from tns_client.api.personnel import create_person
from tns_client.api.submissions import get_submission, list_submissions, submit_journey
from tns_client.api.vehicles import create_vehicle
from tns_client.api.webhooks import create_webhook, list_webhook_events, list_webhooks
from tns_client.models import (
    BulkIn,
    BulkOut,
    CreatedSubscription,
    EventType,
    Gender,
    Journey,
    JourneyIn,
    PassengerIn,
    Person,
    PersonIn,
    PlaceIdType0,
    RegisterIn,
    RegisterOut,
    RoleType,
    StopIn,
    SubmissionDetail,
    SubmissionState,
    SubmitOut,
    SubscriptionIn,
    TarifeliIn,
    TripKind,
    Vehicle,
    VehicleIn,
    VehicleType,
)

KADIKOY, CEYHAN = 1421, 1219


def tckn(n):
    """The n-th valid T.C. identity number (check digits by the published rule)."""
    d = [int(c) for c in f"{100_000_000 + n % 900_000_000:09d}"]
    d10 = (7 * sum(d[0:9:2]) - sum(d[1:8:2])) % 10
    d11 = (sum(d) + d10) % 10
    return "".join(map(str, d + [d10, d11]))


def step(name, response, status, model):
    """The parsed body of a response that must have `status` and parse as `model`."""
    if response.status_code != status:
        sys.exit(f"{name}: expected {status}, got {response.status_code}: {response.content!r}")
    if not isinstance(response.parsed, model):
        sys.exit(f"{name}: the generated model {model.__name__} did not read {response.content!r}")
    print(f"ok  {name}")
    return response.parsed


def main(base):
    anonymous = Client(base_url=base, raise_on_unexpected_status=True)
    email = f"client-{uuid.uuid4().hex[:12]}@example.com"
    account = step(
        "register",
        register.sync_detailed(
            client=anonymous,
            body=RegisterIn(
                organization_name="Generated Client Turizm",
                tax_number="1234567890",
                full_name="Ayşe Yılmaz",
                email=email,
                password="correct horse battery",
            ),
        ),
        201,
        RegisterOut,
    )
    assert account.api_key.startswith("sk_live_"), account.api_key
    client = AuthenticatedClient(base_url=base, token=account.api_key, raise_on_unexpected_status=True)

    vehicle = step(
        "create vehicle",
        create_vehicle.sync_detailed(
            client=client,
            body=VehicleIn(plate="34 CLI 101", vehicle_type=VehicleType.OTOBUS, capacity=46, model_year=2022),
        ),
        201,
        Vehicle,
    )
    assert vehicle.plate == "34CLI101", vehicle.plate
    driver = step(
        "create driver",
        create_person.sync_detailed(
            client=client,
            body=PersonIn(
                identity_number=tckn(7001),
                first_name="Mehmet",
                last_name="Demir",
                gender=Gender.E,
                role_type=RoleType.DRIVER,
            ),
        ),
        201,
        Person,
    )
    hook = step(
        "subscribe to submission.delivered",
        create_webhook.sync_detailed(
            client=client,
            # Nothing listens there: the delivery record with its attempts is what this flow reads.
            body=SubscriptionIn(event_type=EventType.SUBMISSION_DELIVERED, endpoint_url="http://127.0.0.1:9/hook"),
        ),
        201,
        CreatedSubscription,
    )
    assert hook.secret, "the secret is shown once, at creation"

    day = (datetime.date.today() + datetime.timedelta(days=7)).isoformat()
    journey = step(
        "create journey",
        create_journey.sync_detailed(
            client=client,
            body=JourneyIn(
                vehicle_id=vehicle.id,
                trip_kind=TripKind.TARIFELI,
                departure=StopIn(date=day, time="08:30", district_id=PlaceIdType0(KADIKOY)),
                arrival=StopIn(date=day, time="20:15", district_id=PlaceIdType0(CEYHAN)),
                tarifeli_context=TarifeliIn(
                    firma_id=1, unet_guzergah_kodu=1, kalkis_yer_id=PlaceIdType0(KADIKOY),
                    varis_yer_id=PlaceIdType0(CEYHAN), seyahat_suresi_saat=12,
                ),
                personnel_ids=[driver.id],
            ),
        ),
        201,
        Journey,
    )
    assert journey.status.value == "draft" and journey.trip_kind.value == "tarifeli", journey
    assert journey.personnel_ids == [driver.id] and journey.vehicle_record_id == vehicle.id, journey
    assert journey.tarifeli_context.to_dict() == {
        "firma_id": 1, "unet_guzergah_kodu": 1, "kalkis_yer_id": KADIKOY, "varis_yer_id": CEYHAN,
        "seyahat_suresi_saat": 12,
    }, journey.tarifeli_context

    passengers = [
        PassengerIn(
            first_name="Ali", last_name=f"Kaya {i}", identity_number=tckn(8000 + i), gender=Gender.E,
            boarding_place_code=PlaceIdType0(KADIKOY), destination_place_code=PlaceIdType0(CEYHAN), amount=450.5,
        )
        for i in range(3)
    ]
    bulk = step(
        "bulk upsert passengers",
        bulk_upsert_passengers.sync_detailed(journey.id, client=client, body=BulkIn(passengers=passengers)),
        200,
        BulkOut,
    )
    assert (bulk.created, bulk.updated, len(bulk.data)) == (3, 0, 3), bulk

    submitted = step("submit journey", submit_journey.sync_detailed(journey.id, client=client), 202, SubmitOut)
    assert submitted.warnings == [], f"a complete journey has no warnings: {submitted.warnings}"

    deadline = time.monotonic() + 60
    while True:
        detail = step(
            "poll submission", get_submission.sync_detailed(submitted.submission_id, client=client), 200, SubmissionDetail
        )
        if detail.state == SubmissionState.DELIVERED:
            break
        if detail.state == SubmissionState.FAILED or time.monotonic() > deadline:
            sys.exit(f"submission {submitted.submission_id} ended {detail.state}: {detail.error_message}")
        time.sleep(0.2)
    assert detail.downstream_reference, "delivered with the downstream's reference"
    assert len(detail.passengers) == 3 and all(p.error is None for p in detail.passengers), detail.passengers

    shown = step("get journey", get_journey.sync_detailed(journey.id, client=client), 200, Journey)
    assert shown.status.value == "delivered" and shown.downstream_reference == detail.downstream_reference
    listed = list_submissions.sync_detailed(client=client, target_id=journey.id)
    assert listed.status_code == 200 and [s.id for s in listed.parsed.data] == [submitted.submission_id], listed

    hooks = list_webhooks.sync_detailed(client=client)
    assert hooks.status_code == 200 and [h.id for h in hooks.parsed.data] == [hook.id], hooks.content
    # The delivered submission's event is recorded for the subscription (the first attempt may
    # still be on its way: wait for the record, not for the unreachable receiver).
    deadline = time.monotonic() + 30
    while True:
        events = list_webhook_events.sync_detailed(client=client, subscription_id=hook.id)
        assert events.status_code == 200, events.content
        records = events.parsed.data
        if records and records[0].attempts >= 1:
            break
        if time.monotonic() > deadline:
            sys.exit(f"no delivery attempt recorded for subscription {hook.id}: {events.content!r}")
        time.sleep(0.2)
    assert records[0].event_type.value == "submission.delivered", records[0]
    print(f"ok  webhook records: {len(records)}, attempts {records[0].attempts}, {records[0].delivery_status.value}")
    print("the generated client drove the whole flow")


if __name__ == "__main__":
    main(sys.argv[1])
