"""The bias report: its JSON contract (model: msgspec structs), building it from the analyses
(builder, with sections for time, broken sessions and pairs), and rendering it for people
(render: text and markdown; render_html with svg charts). Stands on analysis/."""
