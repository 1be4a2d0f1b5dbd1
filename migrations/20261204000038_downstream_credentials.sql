-- An organization's downstream credentials as the fields its adapter plugin describes, so a
-- new downstream needs no column of its own: `fields` holds the plain ones as given (an
-- environment, a user name), `secrets` each secret one sealed under the operator's data key
-- (ChaCha20-Poly1305 bound to the organization and the downstream-credential purpose, base64).
-- No adapter's name appears here: which fields an adapter takes is the plugin's to say, and
-- the API checks them against it before one statement writes adapter and credentials together.
ALTER TABLE downstream_settings
    ADD COLUMN fields JSONB NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(fields) = 'object'),
    ADD COLUMN secrets JSONB NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(secrets) = 'object');

-- The U-ETDS columns' values move under the field names U-ETDS's plugin describes; the sealed
-- password keeps its bytes (the sealing purpose is the same), only base64 around them.
UPDATE downstream_settings
   SET fields = jsonb_build_object('environment', environment, 'ws_username', ws_username),
       secrets = jsonb_build_object('ws_password', translate(encode(ws_password, 'base64'), E'\n', ''))
 WHERE ws_password IS NOT NULL;

ALTER TABLE downstream_settings
    DROP CONSTRAINT downstream_settings_credentials_check,
    DROP COLUMN environment,
    DROP COLUMN ws_username,
    DROP COLUMN ws_password;
