-- Timestamps in event data written as the API writes them: in UTC, with a `Z` (always with six
-- decimals, where the API leaves off trailing zeros: the same instant). Event data built
-- in SQL (a created journey, a finished submission) wrote a timestamptz as jsonb does, with the
-- session's offset (`+00:00`), so the same instant read differently in an event and in the
-- API's answer about the same record. `webhook_emit` already writes the envelope's `created_at`
-- this way. NULL stays NULL (JSON null).
CREATE FUNCTION json_time(t TIMESTAMPTZ) RETURNS TEXT LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;
