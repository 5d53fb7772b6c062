"""OPRPMer: the operator performance / resource provision model of QEScalor (Mu et al. 2020, §2.3).

A random forest regression from a provision (CPU cores, memory MB) to the throughput one instance
sustains, with the paper's settings (§3.4): inputs min-max scaled to [0, 1], bootstrap, 100 trees,
``min_samples_leaf=1``, ``min_samples_split=2``, every feature at each split (``max_features="auto"`` of
scikit-learn 0.22 for a regressor). :func:`compare_models` is the protocol of Table 3: each model's
key hyper-parameters chosen by grid search with 10-fold cross-validation on the training samples,
then RMSE and MAE on the test samples, averaged over repeats with different seeds.

scikit-learn is imported inside the functions: it takes about a second to import, and importing
:mod:`storm_planner.planners` (which the service does at start) must not pay for it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Sample = tuple[float, float, float]  # (cpu cores, memory MB, throughput tuples/s)


def random_forest(seed: int) -> Any:
    """The paper's RFR (§3.4) behind a min-max scaler, as a scikit-learn pipeline."""
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler

    return make_pipeline(MinMaxScaler(), RandomForestRegressor(
        n_estimators=100, bootstrap=True, min_samples_leaf=1, min_samples_split=2, max_features=1.0,
        random_state=seed))


class PerformanceModel:
    """OPRPM: fit on samples ``(cpu, memory_mb, throughput)``, predict throughput for provisions."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.pipeline: Any = None   # scikit-learn's, fitted

    def fit(self, samples: Sequence[Sample]) -> PerformanceModel:
        if len(samples) < 2:
            raise ValueError(f"the performance model needs at least 2 samples, got {len(samples)}")
        data = np.asarray(samples, dtype=float)
        self.pipeline = random_forest(self.seed).fit(data[:, :2], data[:, 2])
        return self

    def predict(self, provisions: Sequence[tuple[float, float]]) -> np.ndarray:
        if self.pipeline is None:
            raise RuntimeError("PerformanceModel.predict before fit")
        return np.asarray(self.pipeline.predict(np.asarray(provisions, dtype=float).reshape(-1, 2)), dtype=float)


# -- Table 3: the random forest against the other models ---------------------------------------------

def candidate_models(seed: int) -> dict[str, tuple[Any, dict[str, list[Any]]]]:
    """name -> (pipeline, grid of its key hyper-parameters), with the paper's settings as the base."""
    from sklearn.ensemble import AdaBoostRegressor, GradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler
    from sklearn.svm import SVR
    from xgboost import XGBRegressor

    def scaled(model: Any) -> Any:
        return make_pipeline(MinMaxScaler(), model)

    return {
        "RFR": (random_forest(seed), {"randomforestregressor__max_depth": [None, 6]}),
        "AdaBoost": (scaled(AdaBoostRegressor(n_estimators=50, learning_rate=1.0, loss="linear",
                                              random_state=seed)),
                     {"adaboostregressor__learning_rate": [0.5, 1.0]}),
        "GBDT": (scaled(GradientBoostingRegressor(n_estimators=100,
                                                  min_samples_leaf=1, random_state=seed)),
                 {"gradientboostingregressor__learning_rate": [0.05, 0.1]}),
        "XGBoost": (scaled(XGBRegressor(booster="gbtree", learning_rate=0.1, max_depth=3, n_estimators=100,
                                        random_state=seed, n_jobs=1, verbosity=0)),
                    {"xgbregressor__max_depth": [3, 5]}),
        "SVR": (scaled(SVR(kernel="rbf", gamma="scale", C=1.0)), {"svr__C": [1.0, 10.0, 100.0]}),
    }


@dataclass(frozen=True)
class ModelScore:
    model: str
    rmse: float
    mae: float


def compare_models(train: Sequence[Sample], test: Sequence[Sample], repeats: int = 10,
                   folds: int = 10, models: Sequence[str] | None = None) -> list[ModelScore]:
    """Table 3's protocol: per model and repeat (seed), grid search with ``folds``-fold CV on
    ``train`` (fewer folds if there are fewer samples), then RMSE and MAE on ``test``; the mean
    over repeats."""
    from sklearn.model_selection import GridSearchCV, KFold

    train_data, test_data = np.asarray(train, dtype=float), np.asarray(test, dtype=float)
    folds = max(2, min(folds, len(train_data)))
    totals: dict[str, list[tuple[float, float]]] = {}
    for repeat in range(repeats):
        for name, (pipeline, grid) in candidate_models(seed=repeat).items():
            if models is not None and name not in models:
                continue
            search = GridSearchCV(pipeline, grid, cv=KFold(folds, shuffle=True, random_state=repeat),
                                  scoring="neg_root_mean_squared_error")
            search.fit(train_data[:, :2], train_data[:, 2])
            error = search.predict(test_data[:, :2]) - test_data[:, 2]
            totals.setdefault(name, []).append((float(np.sqrt(np.mean(error ** 2))), float(np.mean(np.abs(error)))))
    return [ModelScore(name, float(np.mean([r for r, _ in runs])), float(np.mean([m for _, m in runs])))
            for name, runs in totals.items()]
