"""The base of every spec model: no field it does not know, no inf or nan."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    # No inf or nan anywhere: `.inf` passes a `gt=0` bound, and would reach the data plane as a weight or a rate.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
