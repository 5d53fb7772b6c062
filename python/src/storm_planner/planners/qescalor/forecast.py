"""The workload forecaster QCESA plans on (BGElasor's role in Mu et al. 2020, Fig. 1).

The paper forecasts with its own deep network (BGElasor, ref. [11]); here a seasonal model from a
well-kept library: statsmodels' Holt-Winters exponential smoothing (additive trend and season, the
season given in epochs, e.g. a day of 5-minute epochs is 288). Without a season, a damped additive
trend. Forecasts are clipped at zero (a rate).
"""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np


def forecast(history: Sequence[float], season: int, horizon: int) -> np.ndarray:
    """The next ``horizon`` epochs' rates after ``history`` (one rate per epoch, oldest first)."""
    from statsmodels.tsa.holtwinters import ExponentialSmoothing  # ~1 s to import: only when used

    rates = np.asarray(history, dtype=float)
    if season:
        model = ExponentialSmoothing(rates, trend=None, seasonal="add", seasonal_periods=season,
                                     initialization_method="estimated")
    else:
        model = ExponentialSmoothing(rates, trend="add", damped_trend=True, initialization_method="estimated")
    with warnings.catch_warnings():
        # statsmodels warns when its optimiser stops short; the fit is still usable.
        warnings.simplefilter("ignore")
        fitted = model.fit()
    return np.clip(np.asarray(fitted.forecast(horizon), dtype=float), 0.0, None)
