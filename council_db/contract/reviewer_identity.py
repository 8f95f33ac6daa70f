"""Who a reviewer is: its model, plus the prompt template and sampling settings a log names.

Two prompts (or two temperatures, or two seeds) of one model judge differently, so they are
two reviewers in every analysis (issue 30). A reviewer without provenance is its model's name,
as always; one with some is known by one label, made here alone, e.g.
``gpt-4 · prompt single-v1 · T=0 · seed 7``. The store keeps the label as the reviewer's name
and the four parts beside it (models.model_of, prompt, temperature, seed), so a record costs
no byte more; self-preference matches a reviewer to its own answers by the model.
"""

from __future__ import annotations

import msgspec

SEPARATOR = " · "


class Identity(msgspec.Struct, frozen=True):
    """A reviewer's model and, when a log says so, its prompt, temperature and seed."""

    model: str
    prompt: str | None = None
    temperature: float | None = None
    seed: int | None = None

    @property
    def plain(self) -> bool:
        """Whether nothing beyond the model is known (the reviewer is then the model itself)."""
        return self.prompt is None and self.temperature is None and self.seed is None

    @property
    def label(self) -> str:
        """The reviewer's one name: the model, then each part that is known, in a fixed order."""
        parts = [self.model]
        if self.prompt is not None:
            parts.append(f"prompt {self.prompt}")
        if self.temperature is not None:
            parts.append(f"T={number_text(self.temperature)}")
        if self.seed is not None:
            parts.append(f"seed {self.seed}")
        return SEPARATOR.join(parts)


def number_text(value: float) -> str:
    """A temperature as short as it reads back exactly: 0, 0.7, 1e-05 (never 0.0)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text
