-- Records kept but left out of analyses, by reason.
SELECT reason.code AS reason, COUNT(*) AS records
FROM scores AS sc JOIN exclusion_reasons AS reason ON reason.id = sc.exclusion_id
GROUP BY reason.code
ORDER BY reason.code
