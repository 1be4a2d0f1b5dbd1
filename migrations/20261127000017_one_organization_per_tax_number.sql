-- One organization per tax number (VKN): a company registers once, and its people join it as
-- members. A second registration with the same number would get a fresh trial for the same
-- company, or a way out of a suspension for unpaid invoices.

-- Databases that already hold several organizations with one tax number keep them all: the
-- oldest holds the number, each later one is marked `tax_number_duplicate` (exempt from the
-- rule below) and shown to operators (`tns admin orgs`) to settle by hand. Nothing is merged
-- or deleted here, and the migration cannot fail on them.
ALTER TABLE organizations ADD COLUMN tax_number_duplicate BOOLEAN NOT NULL DEFAULT false;
UPDATE organizations o SET tax_number_duplicate = true
 WHERE EXISTS (SELECT 1 FROM organizations older WHERE older.tax_number = o.tax_number AND older.id < o.id);

CREATE UNIQUE INDEX organizations_tax_number_key ON organizations (tax_number) WHERE NOT tax_number_duplicate;
