"""What a learner's notebook uses beyond the checks: its setup (``notebook``), hints, experiments
(measuring cells) and pictures (``visual``)."""
