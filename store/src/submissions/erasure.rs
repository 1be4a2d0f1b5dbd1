//! Erasing what a record's submissions hold of people once the record is past retention: what
//! was sent (the snapshot, shape and counts kept), the per-passenger results, the downstream's
//! messages (which may quote a number), and the adapter's progress (private to the adapter,
//! which may key crew by identity number; nothing continues from an erased submission).

use serde_json::Value;
use sqlx::{types::Json, PgConnection};
use tns_core::domain::{kinds::TargetType, personal};

#[derive(sqlx::FromRow)]
struct Held {
    id: i64,
    snapshot: Json<Value>,
    passenger_results: Option<Json<Value>>,
    error_message: Option<String>,
}

/// Erase the finished submissions of `records` ((id, organization) of kind `kind`, locked by
/// the caller) that are not erased yet; how many.
pub async fn erase_of(tx: &mut PgConnection, kind: TargetType, records: &[(i64, i64)]) -> sqlx::Result<u64> {
    let (ids, orgs): (Vec<i64>, Vec<i64>) = records.iter().copied().unzip();
    let held: Vec<Held> = sqlx::query_as(
        "SELECT s.id, s.snapshot, s.passenger_results, s.error_message
           FROM submissions s JOIN unnest($2::bigint[], $3::bigint[]) AS r(id, org)
             ON s.org_id = r.org AND s.target_type = $1 AND s.target_id = r.id
          WHERE s.state IN ('delivered', 'failed') AND s.personal_data_erased_at IS NULL",
    )
    .bind(kind)
    .bind(&ids)
    .bind(&orgs)
    .fetch_all(&mut *tx)
    .await?;
    if held.is_empty() {
        return Ok(0);
    }
    let mut known = Vec::with_capacity(held.len());
    let (mut subs, mut snapshots, mut results, mut messages) = (vec![], vec![], vec![], vec![]);
    for h in held {
        // What a message about this submission may quote: its own people's numbers.
        let people = personal::identifiers(&h.snapshot.0);
        let mut snapshot = h.snapshot.0;
        personal::erase_personal(&mut snapshot, &people);
        let result = h.passenger_results.map(|Json(mut r)| {
            personal::erase_personal(&mut r, &people);
            Json(r)
        });
        subs.push(h.id);
        snapshots.push(Json(snapshot));
        results.push(result);
        messages.push(h.error_message.map(|m| personal::erase_text(&m, &people)));
        known.push(people);
    }
    let r = sqlx::query(
        "UPDATE submissions s SET snapshot = e.snapshot, passenger_results = e.results, error_message = e.message,
                progress = 'null', personal_data_erased_at = now()
           FROM unnest($1::bigint[], $2::jsonb[], $3::jsonb[], $4::text[]) AS e(id, snapshot, results, message)
          WHERE s.id = e.id",
    )
    .bind(&subs)
    .bind(&snapshots)
    .bind(&results)
    .bind(&messages)
    .execute(&mut *tx)
    .await?;
    erase_attempts(tx, &subs, &known).await?;
    Ok(r.rows_affected())
}

/// The attempts' errors of submissions `subs` (each with the numbers its messages may quote)
/// without those numbers.
async fn erase_attempts(tx: &mut PgConnection, subs: &[i64], known: &[Vec<String>]) -> sqlx::Result<()> {
    let errors: Vec<(i64, i64, String)> = sqlx::query_as(
        "SELECT id, submission_id, error FROM submission_attempts WHERE submission_id = ANY($1) AND error IS NOT NULL",
    )
    .bind(subs)
    .fetch_all(&mut *tx)
    .await?;
    let people = |sub: i64| subs.iter().position(|s| *s == sub).map_or(&[][..], |i| &known[i][..]);
    let (ids, texts): (Vec<i64>, Vec<String>) = errors
        .into_iter()
        .filter_map(|(id, sub, error)| {
            let erased = personal::erase_text(&error, people(sub));
            (erased != error).then_some((id, erased))
        })
        .unzip();
    if ids.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "UPDATE submission_attempts a SET error = e.error
           FROM unnest($1::bigint[], $2::text[]) AS e(id, error) WHERE a.id = e.id",
    )
    .bind(&ids)
    .bind(&texts)
    .execute(tx)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tns_adapter::{Amendment, Cargo, Journey, NoShow};

    use super::*;

    /// An erased snapshot still reads as what was sent: the delivered history replays from it.
    #[test]
    fn erased_snapshots_still_read_as_the_contract_types() {
        let person = json!({"role": "driver", "identity_number": "17291716060", "first_name": "Mehmet",
                            "last_name": "Demir", "gender": "E", "nationality": null, "phone": "5320000000"});
        let passenger = json!({"key": "7", "person": person, "boarding_place_code": 1421,
                               "destination_place_code": 1219, "seat_no": "3", "ticket_serial_no": "A-1",
                               "amount": 450.5, "baggage": ["BG1"]});
        let stop =
            json!({"date": "2026-12-01", "time": "08:30", "city_id": 34, "district_id": 1421, "place": "Kadıköy"});
        let party = json!({"tax_number": "4540536920", "name": "Gönderen A.Ş."});
        let mut changed = passenger.clone();
        changed["previous_reference"] = json!("9");
        let journey = json!({"plate": "34ABC123", "departure": stop, "arrival": stop, "tarifeli": null,
                             "crew": [person], "passengers": [passenger]});
        let amendment = json!({"downstream_reference": "r", "downstream_state": null, "kind": "non_scheduled",
                               "trip": null, "previous_trip": null, "crew_added": [person], "crew_removed": [],
                               "added": [passenger], "changed": [changed],
                               "removed": [{"key": "8", "identity_number": "10000000146", "downstream_reference": "8"}],
                               "baggage_held": [{"key": "7", "identity_number": "17291716060", "seat_no": "3",
                                                 "barcodes": ["BG1"]}],
                               "baggage": []});
        let cargo = json!({"plate": "34ABC123", "driver": person, "transport_type": 1, "cargo_type": 7,
                           "transport_mode": 1, "amount": 1.5, "unit": "KG", "sender": party, "receiver": party,
                           "loading": stop, "unloading": stop,
                           "items": [{"cargo_type": 7, "amount": 1.0, "unit": "KG", "sender": party, "receiver": party}]});
        let no_show = json!({"kind": "scheduled", "downstream_reference": "r", "downstream_state": null, "key": "7",
                             "identity_number": "17291716060", "seat_no": "3", "note": "Ali Kaya gelmedi"});
        fn erased<T: serde::de::DeserializeOwned>(mut v: Value) -> (T, String) {
            let people = personal::identifiers(&v);
            personal::erase_personal(&mut v, &people);
            let text = v.to_string();
            (serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {text}")), text)
        }
        let (j, text): (Journey, _) = erased(journey);
        assert_eq!((j.crew.len(), j.passengers.len(), j.passengers[0].seat_no.as_deref()), (1, 1, Some("3")));
        let (a, t2): (Amendment, _) = erased(amendment);
        assert_eq!((a.added.len(), a.changed.len(), a.removed.len()), (1, 1, 1));
        let (c, t3): (Cargo, _) = erased(cargo);
        assert_eq!(c.items.len(), 1);
        let (n, t4): (NoShow, _) = erased(no_show);
        assert_eq!((n.identity_number.as_str(), n.note), (personal::ERASED, None));
        for text in [text, t2, t3, t4] {
            for gone in
                ["17291716060", "10000000146", "Mehmet", "Demir", "5320000000", "A-1", "BG1", "4540536920", "Gönderen"]
            {
                assert!(!text.contains(gone), "{gone} in {text}");
            }
        }
    }
}
