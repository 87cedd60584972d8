"""What every part uses and no part owns: errors, resources, bounded child processes, interrupts, reading user files."""
