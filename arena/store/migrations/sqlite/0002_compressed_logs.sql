-- Match logs are stored lz4-compressed (block format, uncompressed length in front):
-- JSON logs shrink about tenfold. log_json stays for the logs stored before this
-- migration; new logs go to log_lz4 only. Keep in step with ../postgres/0002_compressed_logs.sql.
ALTER TABLE matches ADD COLUMN log_lz4 BLOB;
