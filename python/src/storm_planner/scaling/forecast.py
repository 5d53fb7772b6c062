"""The workload forecaster QCESA plans on (BGElasor's role in Mu et al. 2020, Fig. 1).

The paper forecasts with its own deep network (BGElasor, ref. [11]); here a seasonal model from a
well-kept library: statsmodels' Holt-Winters exponential smoothing (additive trend and season, the
season given in epochs, e.g. a day of 5-minute epochs is 288). Without a season, a damped additive
trend. Forecasts are clipped at zero (a rate).

Not in the paper: a point forecast is below the actual rate about half the time, and QCESA covers
exactly what it is given. With ``quantile`` (e.g. 0.95) the forecast is raised by that quantile of the
model's one-step in-sample residuals, so capacity planned on it covers the actual rate in about that
share of epochs (``storm-planner bench qescalor day`` measures both).
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np


def forecast(history: Sequence[float], season: int, horizon: int, quantile: float | None = None) -> np.ndarray:
    """The next ``horizon`` epochs' rates after ``history`` (one rate per epoch, oldest first);
    with ``quantile``, raised by that quantile of the in-sample residuals."""
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
    predicted = np.asarray(fitted.forecast(horizon), dtype=float)
    if quantile is not None:
        residuals = rates - np.asarray(fitted.fittedvalues, dtype=float)
        predicted = predicted + max(0.0, float(np.quantile(residuals, quantile)))
    clipped: np.ndarray = np.clip(predicted, 0.0, None)
    return clipped
