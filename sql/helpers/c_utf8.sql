--
-- sql/helpers/c_utf8.sql: C.UTF-8 is byte order for gbtree only in a UTF8
-- database (glibc 2.35 and later compare by code point there:
-- collate.c), and refused (0A000) in others; a test's database may be
-- either (SQL_ASCII under the suite's temporary instance, UTF8 under an
-- installcheck on a UTF8 server).  c_utf8_index runs a CREATE INDEX of
-- such a key, drops what it made, and says whether the outcome was the
-- one the database's encoding calls for (included with \i).
--
CREATE FUNCTION c_utf8_index(stmt text, idx text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	EXECUTE format('DROP INDEX %I', idx);
	RETURN CASE WHEN getdatabaseencoding() = 'UTF8' THEN 'as its encoding calls for'
		ELSE 'taken in ' || getdatabaseencoding() END;
EXCEPTION WHEN feature_not_supported THEN
	RETURN CASE WHEN getdatabaseencoding() <> 'UTF8' THEN 'as its encoding calls for'
		ELSE 'refused in UTF8: ' || SQLERRM END;
END;
$$;
