-- 0003: what the LLM distiller spent, per day (UTC) and provider, so a daily token budget can
-- be kept across passes and `status` can show the spend.

CREATE TABLE llm_usage (
    day      TEXT    NOT NULL,          -- YYYY-MM-DD, UTC
    provider TEXT    NOT NULL,
    tokens   INTEGER NOT NULL DEFAULT 0,
    calls    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, provider)
) WITHOUT ROWID;
