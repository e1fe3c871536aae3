"""Tasks: load Harbor-layout task directories, generate the mini suites, import and audit."""

from .task import EnvironmentSpec, Task, TaskError, family_check_counts, find_tasks, load_task

__all__ = ["EnvironmentSpec", "Task", "TaskError", "family_check_counts", "find_tasks", "load_task"]
