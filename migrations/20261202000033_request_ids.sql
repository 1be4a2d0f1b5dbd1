-- Tracing: a submission keeps the ID of the HTTP request that queued it (`X-Request-Id`, the
-- caller's own or one TNS made), so the scheduler's log lines and spans for its attempts name
-- the request a customer or support starts from. Empty for submissions queued by the platform
-- itself (an operator's re-queue from the command line, say). The API accepts only short plain
-- IDs; the bound here keeps a row from growing whatever writes it.
ALTER TABLE submissions ADD COLUMN request_id text;
-- With traces exported (OTLP), the request's span as a W3C `traceparent`: the scheduler makes
-- each attempt's span its child, so one trace runs from the request to the downstream calls.
ALTER TABLE submissions ADD COLUMN traceparent text;
-- Validated apart, so the table is never locked for the scan.
ALTER TABLE submissions ADD CONSTRAINT submissions_request_id_bounded CHECK (length(request_id) <= 128) NOT VALID;
ALTER TABLE submissions VALIDATE CONSTRAINT submissions_request_id_bounded;
ALTER TABLE submissions ADD CONSTRAINT submissions_traceparent_bounded CHECK (length(traceparent) <= 64) NOT VALID;
ALTER TABLE submissions VALIDATE CONSTRAINT submissions_traceparent_bounded;
