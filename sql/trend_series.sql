-- The rolling series behind `council-db trends`, over a table of joint-model residuals
-- residuals(subject, period_us, session, residual) that the command fills: per subject and
-- period, the mean residual, its rolling mean over this and the two previous periods (weighted
-- by records), and the running sum of residuals (the CUSUM, which ends near 0 because the
-- joint model centres every subject's residuals).
WITH periods AS (
    SELECT subject, period_us, COUNT(DISTINCT session) AS sessions, COUNT(*) AS records,
           SUM(residual) AS total
    FROM residuals
    GROUP BY subject, period_us
)
SELECT
    subject,
    period_us,
    sessions,
    records,
    total / records AS mean_residual,
    SUM(total) OVER last_three / SUM(records) OVER last_three AS rolling_mean,
    SUM(total) OVER (PARTITION BY subject ORDER BY period_us ROWS UNBOUNDED PRECEDING) AS cusum
FROM periods
WINDOW last_three AS (PARTITION BY subject ORDER BY period_us ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
ORDER BY subject, period_us
