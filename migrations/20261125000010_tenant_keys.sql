-- Tenancy in the schema itself: a row that names another row names it together with its
-- organization, so a reference across organizations is refused by PostgreSQL even if a query
-- forgot its `org_id` (every query is scoped by organization; this is the second line).
--
-- Each referenced table gets a unique key on (id, org_id) — a superset of its primary key, so
-- it holds by construction — and each reference becomes a foreign key on (ref, org_id). A NULL
-- reference (a journey on a plate with no vehicle record, a shipment without a driver) is not
-- checked, as before.

ALTER TABLE users ADD CONSTRAINT users_id_org_key UNIQUE (id, org_id);
ALTER TABLE vehicles ADD CONSTRAINT vehicles_id_org_key UNIQUE (id, org_id);
ALTER TABLE personnel ADD CONSTRAINT personnel_id_org_key UNIQUE (id, org_id);
ALTER TABLE journeys ADD CONSTRAINT journeys_id_org_key UNIQUE (id, org_id);
ALTER TABLE submissions ADD CONSTRAINT submissions_id_org_key UNIQUE (id, org_id);

ALTER TABLE api_keys DROP CONSTRAINT api_keys_created_by_fkey,
    ADD CONSTRAINT api_keys_created_by_fkey FOREIGN KEY (created_by, org_id) REFERENCES users (id, org_id);

ALTER TABLE support_tickets DROP CONSTRAINT support_tickets_user_id_fkey,
    ADD CONSTRAINT support_tickets_user_id_fkey FOREIGN KEY (user_id, org_id) REFERENCES users (id, org_id);

ALTER TABLE journeys DROP CONSTRAINT journeys_vehicle_record_id_fkey,
    ADD CONSTRAINT journeys_vehicle_record_id_fkey FOREIGN KEY (vehicle_record_id, org_id)
        REFERENCES vehicles (id, org_id);

ALTER TABLE journey_crew DROP CONSTRAINT journey_crew_journey_id_fkey,
    DROP CONSTRAINT journey_crew_personnel_id_fkey,
    ADD CONSTRAINT journey_crew_journey_id_fkey FOREIGN KEY (journey_id, org_id)
        REFERENCES journeys (id, org_id) ON DELETE CASCADE,
    ADD CONSTRAINT journey_crew_personnel_id_fkey FOREIGN KEY (personnel_id, org_id)
        REFERENCES personnel (id, org_id);

ALTER TABLE passengers DROP CONSTRAINT passengers_journey_id_fkey,
    ADD CONSTRAINT passengers_journey_id_fkey FOREIGN KEY (journey_id, org_id)
        REFERENCES journeys (id, org_id) ON DELETE CASCADE;

ALTER TABLE cargo DROP CONSTRAINT cargo_vehicle_id_fkey,
    DROP CONSTRAINT cargo_driver_id_fkey,
    ADD CONSTRAINT cargo_vehicle_id_fkey FOREIGN KEY (vehicle_id, org_id) REFERENCES vehicles (id, org_id),
    ADD CONSTRAINT cargo_driver_id_fkey FOREIGN KEY (driver_id, org_id) REFERENCES personnel (id, org_id);

ALTER TABLE submission_attempts DROP CONSTRAINT submission_attempts_submission_id_fkey,
    ADD CONSTRAINT submission_attempts_submission_id_fkey FOREIGN KEY (submission_id, org_id)
        REFERENCES submissions (id, org_id) ON DELETE CASCADE;

ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_id_org_key UNIQUE (id, org_id);
ALTER TABLE webhook_subscriptions ADD CONSTRAINT webhook_subscriptions_id_org_key UNIQUE (id, org_id);

ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey,
    DROP CONSTRAINT webhook_deliveries_subscription_id_fkey,
    ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id, org_id)
        REFERENCES webhook_events (id, org_id) ON DELETE CASCADE,
    ADD CONSTRAINT webhook_deliveries_subscription_id_fkey FOREIGN KEY (subscription_id, org_id)
        REFERENCES webhook_subscriptions (id, org_id) ON DELETE CASCADE;

-- Not keyed here, on purpose: `webhook_attempts` has no foreign keys at all (the scheduler
-- writes them from the delivery row it holds locked, with that row's org_id; the checks were
-- half the cost of recording an attempt), and `submissions.target_id` names a journey or a
-- cargo shipment by `target_type` (a reference PostgreSQL cannot key); the submit transaction
-- reads the target under the organization before it writes.
