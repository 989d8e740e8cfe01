"""doctor: each prerequisite of a build checked, with the fix for each missing one."""
