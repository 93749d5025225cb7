"""The steps ``datavet.audit`` composes: check the arguments, open the inputs, run the engine's
passes, fit the baselines, summarise the splits. The rules run in ``datavet.api``."""
