VACUUM soak;
