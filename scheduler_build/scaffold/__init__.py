"""scaffold: plugin modules from templates/scaffold/ (`generate`) placed without losing a file (`manifest`)."""
