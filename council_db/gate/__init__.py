"""The CI gate (`council-db check`): rules read from options and TOML (`rules`), judged on one
window's bias report (`verdicts`), written as text, JSON, JUnit XML or GitHub annotations
(`outputs`, `junit`)."""
